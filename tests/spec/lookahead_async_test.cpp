// Asynchronous lookahead on scripted engines: the target's text whether drafts
// match or not, with width, at max_new_tokens, and the draft engine's error
// reported rather than waited on; settings that cannot run are rejected.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "tests/spec/lookahead_scenario.h"
#include "tests/throws_error.h"

namespace seed::spec {
namespace {

TEST(LookaheadEngine, AsyncCommitsTheTargetsTextWhetherDraftsMatchOrNot) {
  using std::chrono::microseconds;
  const auto steps = numbered_steps(12);
  Scenario scenario;
  scenario.target_steps = steps;
  scenario.lookahead.gamma = 3;
  scenario.lookahead.async = true;
  scenario.delays = Delays{microseconds(0), microseconds(3000)};
  scenario.draft_scripts = {steps};
  const Outcome matching = run(scenario);
  scenario.draft_scripts = {std::vector<std::string>(12, "XX\n")};
  const Outcome rejected = run(scenario);
  EXPECT_EQ(matching.completion.text, target_alone(steps));
  EXPECT_EQ(rejected.completion.text, target_alone(steps));
  // The root is judged only once its drafted children are in: every step
  // the draft wrote as the target would is accepted, none of the others.
  EXPECT_EQ(matching.steps.accepted_steps, 12);
  EXPECT_EQ(rejected.steps.accepted_steps, 0);
  EXPECT_EQ(rejected.steps.drafted_steps, 13);  // the twelve steps, then EOS
  // The draft runs ahead while the target works, so target calls verify
  // several steps: fewer calls than the 13 the target alone makes.
  EXPECT_LT(matching.target_calls, 13);
}

TEST(LookaheadEngine, AsyncWithWidthFindsTheMatchingAlternative) {
  const auto steps = numbered_steps(8);
  Scenario scenario;
  scenario.target_steps = steps;
  scenario.draft_scripts = {std::vector<std::string>(8, "XX\n"), steps};
  scenario.lookahead.gamma = 2;
  scenario.lookahead.width = 2;
  scenario.lookahead.async = true;
  scenario.temperature = 1;
  const Outcome o = run(scenario);
  EXPECT_EQ(o.completion.text, target_alone(steps));
  EXPECT_EQ(o.steps.accepted_steps, 8);
}

TEST(LookaheadEngine, AsyncEndsAtMaxNewTokensMidStep) {
  const std::vector<std::string> steps = {"a1\n", "b2\n", "c3\n"};
  Scenario scenario;
  scenario.target_steps = steps;
  scenario.draft_scripts = {steps};
  scenario.lookahead.gamma = 2;
  scenario.lookahead.async = true;
  scenario.max_new_tokens = 4;
  const Outcome o = run(scenario);
  EXPECT_EQ(o.completion.text, "a1\nb");
  EXPECT_EQ(o.completion.finish, FinishReason::kLength);
}

// A draft engine whose every call fails, as a lost draft rank's would.
class FailingEngine : public Engine {
 public:
  using Engine::generate;
  std::vector<Completion> generate(const std::vector<GenRequest>&, const CompletionCallback&) override {
    SEED_FAIL(kUnavailable) << "draft engine gone";
  }
  std::string name() const override { return "failing"; }
  EngineStats stats() const override { return {}; }
  void reset_stats() override {}
};

TEST(LookaheadEngine, AsyncReportsTheDraftEnginesErrorInsteadOfWaiting) {
  auto tokenizer = std::make_shared<const ByteTokenizer>();
  const size_t prompt_length = tokenizer->encode(kPrompt, false).size();
  RunSettings settings;
  settings.tokenizer = tokenizer;
  settings.stop_tokens = {ByteTokenizer::kEos};
  LookaheadSettings lookahead;
  lookahead.async = true;
  LookaheadEngine engine(std::make_unique<FailingEngine>(),
                         std::make_unique<StepScriptEngine>(tokenizer, prompt_length,
                                                            std::vector<std::vector<std::string>>{{"a1\n"}}),
                         settings, lookahead, make_step_verifier("exact"));
  GenRequest request;
  request.prompt = kPrompt;
  EXPECT_TRUE(seed::testing::throws_error([&] { engine.generate({request}); }, ErrorKind::kUnavailable,
                                          {"draft engine gone"}));
}

TEST(LookaheadEngine, RejectsAWidthBelowOneAndAnAsyncModeThatDraftsNothing) {
  const auto make = [](LookaheadSettings lookahead) {
    RunSettings settings;
    settings.tokenizer = std::make_shared<const ByteTokenizer>();
    LookaheadEngine(std::make_unique<FailingEngine>(), std::make_unique<FailingEngine>(), settings, lookahead,
                    make_step_verifier("exact"));
  };
  LookaheadSettings narrow;
  narrow.width = 0;
  EXPECT_TRUE(seed::testing::throws_error([&] { make(narrow); }, ErrorKind::kInvalidArgument, {"width 0"}));
  LookaheadSettings idle;
  idle.gamma = 0;
  idle.async = true;
  EXPECT_TRUE(seed::testing::throws_error([&] { make(idle); }, ErrorKind::kInvalidArgument, {"asynchronous"}));
}

}  // namespace
}  // namespace seed::spec
