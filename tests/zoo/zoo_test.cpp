// The shipped model pair (models/zoo): loads, agrees on a tokenizer, and the
// target writes valid Game-of-24 steps for a fixed prompt.
#include <gtest/gtest.h>

#include <sstream>

#include "models/causal_lm.h"
#include "models/tokenizer.h"
#include "spec/engine/engine_factory.h"
#include "tasks/corpus.h"
#include "tasks/corpus_formats.h"
#include "tasks/game24.h"

namespace seed {
namespace {

const std::string kTarget = std::string(SEED_ZOO_DIR) + "/tiny-target";
const std::string kDraft = std::string(SEED_ZOO_DIR) + "/tiny-draft";

std::string greedy_completion(const std::string& model_dir, const std::string& prompt, int64_t limit) {
  spec::EngineOptions ar;
  ar.engine = spec::EngineKind::kAr;
  ar.target = model_dir;
  spec::GenRequest request;
  request.prompt = prompt;
  request.max_new_tokens = limit;
  request.sampling.temperature = 0.0f;
  return spec::make_engine(ar)->generate({request}).front().text;
}

TEST(ZooTest, TargetAndDraftLoadAndShareTheTokenizer) {
  auto target = models::CausalLM::load(kTarget);
  auto draft = models::CausalLM::load(kDraft);
  EXPECT_EQ(target->config().vocab_size, draft->config().vocab_size);
  const auto a = models::load_tokenizer(kTarget), b = models::load_tokenizer(kDraft);
  const std::string text = "Input: 4 9 10 13\nPossible next steps:\n";
  EXPECT_EQ(a->encode(text, true), b->encode(text, true));
  EXPECT_LT(draft->weights().parameter_bytes(), target->weights().parameter_bytes() / 5);
}

// Well-formed: every line parses as "a op b = c (left: ...)". Whether the
// arithmetic is right is a competence figure, measured on the test puzzles by
// `seed eval game24` (models/zoo/README.md), not a property of the files.
TEST(ZooTest, TargetProposesWellFormedGame24Steps) {
  // A training-split puzzle (row 0 of 24.csv), not one of the test puzzles.
  const tasks::Numbers puzzle = tasks::parse_puzzle("1 1 4 6");
  const std::string prompt =
      tasks::render_prompt(tasks::kGame24ProposePrompt, {{"input", tasks::numbers_text(puzzle)}});
  const std::string proposals = greedy_completion(kTarget, prompt, 200);
  std::istringstream lines(proposals);
  std::string line;
  int total = 0;
  while (std::getline(lines, line)) {
    if (line.empty()) continue;
    ++total;
    const tasks::StepCheck check = tasks::check_step(line, puzzle);
    EXPECT_NE(check.verdict, tasks::StepVerdict::kUnparsable) << line << ": " << check.reason;
  }
  EXPECT_GE(total, 4) << proposals;
}

// The value completion of a three-number state is the worked check, line for
// line in its format ("z: needs | x y: makes | match"), then one label.
// Whether its arithmetic is right is again a competence figure.
TEST(ZooTest, TargetWritesTheWorkedValueCheckThenALabel) {
  const tasks::Numbers state = tasks::parse_puzzle("4 6 9");  // below training puzzle "1 4 6 9"
  const std::string prompt = tasks::render_prompt(tasks::kGame24ValuePrompt, {{"input", tasks::numbers_text(state)}});
  const std::string completion = greedy_completion(kTarget, prompt, 320);
  std::istringstream lines(completion);
  std::vector<std::string> got;
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty()) got.push_back(line);
  }
  ASSERT_GE(got.size(), 2u) << completion;
  for (size_t i = 0; i + 1 < got.size(); ++i) {
    const size_t bar = got[i].find(" | "), second = got[i].rfind(" | ");
    ASSERT_NE(bar, std::string::npos) << got[i];
    EXPECT_NE(bar, second) << got[i];
    EXPECT_NE(got[i].find(": "), std::string::npos) << got[i];
  }
  EXPECT_TRUE(got.back() == "sure" || got.back() == "likely" || got.back() == "impossible") << completion;
}

}  // namespace
}  // namespace seed
