#include "spec/lookahead/judge_verifier.h"

#include <cctype>
#include <cstdint>

#include "models/base/error.h"
#include "models/base/trim.h"

namespace seed::spec {

JudgeVerifier::JudgeVerifier(Engine* judge, Render render, std::unique_ptr<Engine> owned)
    : owned_(std::move(owned)), judge_(owned_ ? owned_.get() : judge), render_(std::move(render)) {
  SEED_CHECK(judge_ != nullptr, kInvalidArgument) << "judge step verifier: no judge engine";
  SEED_CHECK(render_ != nullptr, kInvalidArgument) << "judge step verifier: no prompt";
}

bool JudgeVerifier::same(const std::string& target_step, const std::string& draft_step) const {
  return same_all({{target_step, draft_step}}).front();
}

std::vector<bool> JudgeVerifier::same_all(const std::vector<StepPair>& pairs) const {
  std::vector<bool> out(pairs.size(), true);
  std::vector<GenRequest> questions;
  std::vector<size_t> asked;
  for (size_t i = 0; i < pairs.size(); ++i) {
    if (normalize_step(pairs[i].target_step) == normalize_step(pairs[i].draft_step)) continue;
    GenRequest question;
    question.prompt = render_(std::string(trim(pairs[i].target_step)), std::string(trim(pairs[i].draft_step)));
    question.max_new_tokens = kReplyTokens;
    question.sampling.temperature = 0;
    questions.push_back(std::move(question));
    asked.push_back(i);
  }
  if (questions.empty()) return out;
  const std::vector<Completion> replies = judge_->generate(questions);
  for (size_t q = 0; q < replies.size(); ++q) {
    SEED_CHECK(replies[q].finish != FinishReason::kError, kUnavailable)
        << "judge step verifier: the judge failed: " << replies[q].error;
    out[asked[q]] = judge_accepts(replies[q].text);
  }
  asked_ += static_cast<int64_t>(questions.size());
  return out;
}

bool judge_accepts(const std::string& reply) {
  const std::string answer(trim(reply));
  if (answer.size() < 3) return false;
  for (size_t i = 0; i < 3; ++i) {
    if (std::tolower(static_cast<unsigned char>(answer[i])) != "yes"[i]) return false;
  }
  return true;
}

}  // namespace seed::spec
