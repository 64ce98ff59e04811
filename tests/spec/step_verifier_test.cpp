// The step verifiers: exact and normalized text, a judge engine asked about
// the pairs that differ, and the similarity of the target's hidden states;
// the normalized verifier and the judge in a LookaheadEngine on scripted
// engines.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "spec/lookahead/hidden_state_verifier.h"
#include "spec/lookahead/judge_verifier.h"
#include "tests/spec/lookahead_scenario.h"
#include "tests/throws_error.h"

namespace seed::spec {
namespace {

TEST(LookaheadEngine, TheNormalizedVerifierAcceptsTheSameStepWrittenDifferently) {
  const std::vector<std::string> target = {"x = 3.5\n", "y = 1000\n"};
  const std::vector<std::string> draft = {"x  =  3.50\n", "y = 1,000\n"};
  EXPECT_EQ(run(target, draft, 2, 100, "exact").steps.accepted_steps, 0);
  const Outcome o = run(target, draft, 2, 100, "normalized");
  EXPECT_EQ(o.steps.accepted_steps, 2);
  EXPECT_EQ(o.completion.text, "x  =  3.50\ny = 1,000\n");  // what is committed is the draft's text
}

// A judge that answers "Yes" when the two steps of its prompt ("A:s1|B:s2")
// hold the same characters in any order, "No" otherwise.
class AnagramJudge : public Engine {
 public:
  using Engine::generate;
  std::vector<Completion> generate(const std::vector<GenRequest>& requests, const CompletionCallback&) override {
    calls += 1;
    std::vector<Completion> out;
    for (const GenRequest& r : requests) {
      EXPECT_EQ(r.max_new_tokens, JudgeVerifier::kReplyTokens);
      EXPECT_TRUE(r.sampling.greedy());
      const size_t bar = r.prompt.find("|B:");
      std::string a = r.prompt.substr(2, bar - 2), b = r.prompt.substr(bar + 3);
      std::sort(a.begin(), a.end());
      std::sort(b.begin(), b.end());
      Completion reply;
      reply.text = a == b ? " Yes, the same" : "No";
      reply.finish = FinishReason::kLength;
      out.push_back(reply);
    }
    return out;
  }
  std::string name() const override { return "anagram judge"; }
  EngineStats stats() const override { return {}; }
  void reset_stats() override {}
  int calls = 0;
};

JudgeVerifier::Render anagram_prompt() {
  return [](const std::string& s1, const std::string& s2) { return "A:" + s1 + "|B:" + s2; };
}

TEST(JudgeVerifierTest, AsksTheJudgeOnceForAllPairsThatDifferAndReadsYes) {
  AnagramJudge judge;
  const JudgeVerifier verifier(&judge, anagram_prompt());
  const std::vector<bool> verdicts = verifier.same_all({{"ab\n", " ba"}, {"ab", "ac"}, {"x 1", "x  1.0"}});
  EXPECT_EQ(verdicts, (std::vector<bool>{true, false, true}));
  EXPECT_EQ(judge.calls, 1);
  EXPECT_EQ(verifier.asked(), 2);  // the third pair is equal once normalized
  EXPECT_TRUE(judge_accepts("  YES."));
  EXPECT_TRUE(judge_accepts("yes"));
  EXPECT_FALSE(judge_accepts("no, yes"));
  EXPECT_FALSE(judge_accepts("ye"));
  EXPECT_FALSE(judge_accepts("[aligned]"));
}

TEST(LookaheadEngine, AJudgeCommitsDraftedStepsItCallsTheSame) {
  auto tokenizer = std::make_shared<const ByteTokenizer>();
  const size_t prompt_length = tokenizer->encode(kPrompt, false).size();
  using Scripts = std::vector<std::vector<std::string>>;
  RunSettings settings;
  settings.tokenizer = tokenizer;
  settings.stop_tokens = {ByteTokenizer::kEos};
  auto judge = std::make_unique<AnagramJudge>();
  const AnagramJudge* calls = judge.get();
  LookaheadSettings lookahead;
  lookahead.gamma = 2;
  LookaheadEngine engine(std::make_unique<StepScriptEngine>(tokenizer, prompt_length, Scripts{{"ba\n", "dc\n"}}),
                         std::make_unique<StepScriptEngine>(tokenizer, prompt_length, Scripts{{"ab\n", "cd\n"}}),
                         settings, lookahead, std::make_unique<JudgeVerifier>(nullptr, anagram_prompt(), std::move(judge)));
  GenRequest request;
  request.prompt = kPrompt;
  const Completion c = engine.generate({request}).front();
  // Not lossless: the judge's "yes" commits the draft's wording.
  EXPECT_EQ(c.text, "ba\ndc\n");
  EXPECT_EQ(engine.stats().steps.accepted_steps, 2);
  EXPECT_EQ(calls->calls, 1);  // one round, both pairs in one batch
}

TEST(HiddenStateVerifierTest, AStepIsItselfAndOtherStepsAreLessSimilar) {
  const std::string zoo = SEED_ZOO_DIR;
  std::shared_ptr<models::CausalLM> target = models::CausalLM::load(zoo + "/tiny-target");
  std::shared_ptr<const models::Tokenizer> tokenizer = models::load_tokenizer(zoo + "/tiny-target");
  const HiddenStateVerifier verifier(target, tokenizer, 0.999);
  const std::string step = "4 + 8 = 12 (left: 6 12)";
  const std::vector<StepPair> pairs = {{step, step},
                                       {step, "4 + 8 = 12 (left: 6 12) "},
                                       {step, "unstack the red block from on top of the blue block"},
                                       {"", ""}};
  const std::vector<double> similarity = verifier.similarities(pairs);
  ASSERT_EQ(similarity.size(), 4u);
  EXPECT_NEAR(similarity[0], 1.0, 1e-5);
  EXPECT_LT(similarity[2], similarity[1]);
  EXPECT_LT(similarity[2], 0.999);
  EXPECT_EQ(similarity[3], 1.0);
  // The threshold decides: each pair alone gives what the batch gives.
  const std::vector<bool> verdicts = verifier.same_all(pairs);
  for (size_t i = 0; i < pairs.size(); ++i) {
    EXPECT_EQ(verdicts[i], similarity[i] >= 0.999) << i;
    EXPECT_EQ(verifier.same(pairs[i].target_step, pairs[i].draft_step), verdicts[i]) << i;
  }
  EXPECT_TRUE(HiddenStateVerifier(target, tokenizer, -1).same(step, "pick up the red block"));
  EXPECT_TRUE(seed::testing::throws_error([&] { HiddenStateVerifier(target, tokenizer, 1.5); },
                                          ErrorKind::kInvalidArgument, {"threshold 1.5"}));
}

TEST(StepVerifier, NormalizesWhitespaceAndNumbersOnly) {
  EXPECT_EQ(normalize_step("  4 +  8 = 12.0  (left: 012 3)"), "4 + 8 = 12 (left: 12 3)");
  EXPECT_EQ(normalize_step("total 1,234,567.50"), "total 1234567.5");
  EXPECT_EQ(normalize_step("+2 apples"), "2 apples");
  EXPECT_EQ(normalize_step("1, 2, 3"), "1, 2, 3");  // a list, not a thousands separator
  EXPECT_EQ(normalize_step("x2 and 0.50"), "x2 and 0.5");
  const auto exact = make_step_verifier("exact");
  const auto normalized = make_step_verifier("normalized");
  EXPECT_TRUE(exact->same("4 + 8 = 12", "4 + 8 = 12"));
  EXPECT_FALSE(exact->same("4 + 8 = 12", "4 + 8 =  12"));
  EXPECT_TRUE(normalized->same("4 + 8 = 12", "4 + 8 =  12.00"));
  EXPECT_FALSE(normalized->same("4 + 8 = 12", "4 + 8 = 13"));
  EXPECT_FALSE(normalized->same("4 * 8 = 32", "4 + 8 = 32"));
  EXPECT_TRUE(seed::testing::throws_error([] { make_step_verifier("judge?"); }, ErrorKind::kInvalidArgument,
                                          {"judge?", "exact | normalized"}));
}

}  // namespace
}  // namespace seed::spec
