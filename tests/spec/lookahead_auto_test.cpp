// Adaptive lookahead on scripted engines of known call times and acceptance:
// how far ahead auto drafts steps, and the token draft length it sets for
// the target engine.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "tests/spec/lookahead_scenario.h"

namespace seed::spec {
namespace {

TEST(LookaheadEngine, AutoDraftsFarAheadWhenDraftedStepsAreAcceptedAndCheap) {
  using std::chrono::microseconds;
  const auto steps = numbered_steps(60);
  const Outcome o = run(steps, steps, 1, 1000, "exact", Delays{microseconds(1000), microseconds(25000)});
  EXPECT_EQ(o.completion.text, run(steps, steps, 0, 1000).completion.text);
  // Drafted steps cost ~0.04 of a target call and are all accepted: the
  // lookahead grows toward the largest allowed (8) once measured. (The
  // target's call lasts long enough that the engines' own work per request,
  // many times slower under a sanitizer or on a loaded machine, does not
  // make a call's time grow with its steps.)
  EXPECT_GT(o.steps.mean_gamma(), 4.0);
  EXPECT_LT(o.steps.rounds, 15);
}

TEST(LookaheadEngine, AutoStopsDraftingWhenDraftedStepsAreRejected) {
  using std::chrono::microseconds;
  const auto steps = numbered_steps(40);
  const Outcome o = run(steps, std::vector<std::string>(40, "XX\n"), 1, 1000, "exact",
                        Delays{microseconds(6000), microseconds(1000)});
  EXPECT_EQ(o.completion.text, run(steps, steps, 0, 1000).completion.text);
  // Rejected, at a draft step dearer than a target call: the target alone,
  // but for the first round and the exploring rounds that draft one step.
  // (A slept 1 ms would have to last 18 ms for drafting to look worth it;
  // at equal delays, one slow sleep on a loaded machine was enough.)
  EXPECT_EQ(o.steps.rounds, 41);
  EXPECT_LE(o.steps.drafted_steps, 1 + 41 / 8);
  EXPECT_EQ(o.steps.accepted_steps, 0);
}

// Each request's first target call also reads its prompt and costs ten
// times a step; a drafted step is cheap but never accepted. Those first
// calls are measured apart, so request after request auto keeps to the
// target alone (had they counted as one-step calls, one step would look
// dearer than two and auto would draft on every round).
TEST(LookaheadEngine, AutoIsNotMisledByTheFirstCallOfEachRequest) {
  using std::chrono::microseconds;
  auto tokenizer = std::make_shared<const ByteTokenizer>();
  const size_t prompt_length = tokenizer->encode(kPrompt, false).size();
  const auto steps = numbered_steps(6);
  auto draft = std::make_unique<StepScriptEngine>(
      tokenizer, prompt_length, std::vector<std::vector<std::string>>{std::vector<std::string>(6, "XX\n")},
      microseconds(500));
  auto target = std::make_unique<StepScriptEngine>(tokenizer, prompt_length,
                                                   std::vector<std::vector<std::string>>{steps}, microseconds(4000),
                                                   microseconds(40000));
  RunSettings settings;
  settings.tokenizer = tokenizer;
  settings.stop_tokens = {ByteTokenizer::kEos};
  LookaheadSettings lookahead;
  lookahead.gamma = 1;
  lookahead.adaptive = true;
  LookaheadEngine engine(std::move(draft), std::move(target), settings, lookahead, make_step_verifier("exact"));
  GenRequest request;
  request.prompt = kPrompt;
  request.max_new_tokens = 100;
  for (int i = 0; i < 16; ++i) EXPECT_EQ(engine.generate({request}).front().text, "s0\ns1\ns2\ns3\ns4\ns5\n");
  // Two measuring rounds, then the target alone but for one exploring
  // round in eight.
  EXPECT_LT(engine.stats().steps.mean_gamma(), 0.5);
}

// A target engine whose forwards cost 1 ms plus `per_token_s` for each
// drafted token they verify (its own chains: 7 tokens), a drafted token
// 0.02 ms and accepted with probability 0.8: the token draft lengths auto
// asks it for, call after call.
std::vector<int> auto_token_draft_lengths(double per_token_s) {
  auto tokenizer = std::make_shared<const ByteTokenizer>();
  const size_t prompt_length = tokenizer->encode(kPrompt, false).size();
  const auto steps = numbered_steps(6);
  auto draft = std::make_unique<StepScriptEngine>(tokenizer, prompt_length, std::vector<std::vector<std::string>>{steps});
  auto target = std::make_unique<StepScriptEngine>(tokenizer, prompt_length, std::vector<std::vector<std::string>>{steps});
  StepScriptEngine* t = target.get();
  t->on_call = [per_token_s](EngineStats& s, int draft_length) {
    const int length = draft_length > 0 ? draft_length : 7;
    s.target_forwards += 10;
    s.drafted_tokens += 10 * length;
    s.accepted_tokens += 8 * length;
    s.rejections += 2 * length;
    s.target_busy_s += 10 * (1e-3 + per_token_s * length);
    s.draft_s += 10 * length * 2e-5;
  };
  RunSettings settings;
  settings.tokenizer = tokenizer;
  settings.stop_tokens = {ByteTokenizer::kEos};
  LookaheadSettings lookahead;
  lookahead.adaptive = true;
  LookaheadEngine engine(std::move(draft), std::move(target), settings, lookahead, make_step_verifier("exact"));
  GenRequest request;
  request.prompt = kPrompt;
  request.max_new_tokens = 100;
  for (int i = 0; i < 12; ++i) engine.generate({request});
  return t->draft_lengths;
}

// Where a forward costs the same whatever it verifies (a GPU with
// headroom), cheap drafts make long chains best; where each drafted token
// adds a fifth of a forward to the forward that verifies it (a CPU), auto
// sees that in the target engine's forwards and drafts short chains.
TEST(LookaheadEngine, AutoDraftsShorterTokenChainsWhereVerifyingEachTokenCosts) {
  const std::vector<int> flat = auto_token_draft_lengths(0);
  const std::vector<int> rising = auto_token_draft_lengths(2e-4);
  ASSERT_GE(flat.size(), 12u);
  ASSERT_GE(rising.size(), 12u);
  EXPECT_GE(flat.back(), 8);
  EXPECT_GE(rising.back(), 2);
  EXPECT_LE(rising.back(), 5);
}

// A target engine that drafted `drafted` tokens, accepted `accepted` of
// them in `forwards` rounds with a rejection in each other round, a drafted
// token costing `cost` of a forward.
EngineStats token_stats(int64_t forwards, int64_t drafted, int64_t accepted, double cost) {
  EngineStats s;
  s.target_forwards = forwards;
  s.drafted_tokens = drafted;
  s.accepted_tokens = accepted;
  s.rejections = forwards / 2;
  s.target_busy_s = 0.01 * double(forwards);
  s.draft_s = cost * 0.01 * double(drafted);
  return s;
}

// Each case: the draft length auto must pick, worked out by hand from the
// notes' token-level speedup (1 - a^k) / ((1 - a)(1 - c + c k)) with
// k = draft length + 1, Laplace's a = (accepted + 1) / (accepted +
// rejections + 2) (rejections: one every other forward) and c = drafted
// token cost over a forward.
struct TokenCase {
  EngineStats stats;
  int draft_length;
};

TEST(LookaheadEngine, AutoSetsTheTargetEnginesTokenDraftLengthFromItsAcceptanceAndCosts) {
  Scenario scenario;
  scenario.target_steps = {"a\n", "b\n", "c"};
  scenario.draft_scripts = {{"a\n", "b\n", "c"}};
  scenario.lookahead.gamma = 2;
  scenario.lookahead.adaptive = true;
  const std::vector<TokenCase> cases = {
      // a = 761/812 = 0.937, c = 0.02: the speedup still rises at k = 17
      // (8.058 against 7.909 at 16), so the longest draft, 16.
      {token_stats(100, 800, 760, 0.02), 16},
      // a = 301/352 = 0.855, c = 0.1: 2.8993 at k = 8, 2.8970 at 9, 2.8715 at 7.
      {token_stats(100, 400, 300, 0.1), 7},
      // The same a, c = 0.05: 3.7788 at k = 11, 3.7722 at 12, 3.7649 at 10.
      {token_stats(100, 400, 300, 0.05), 10},
      // a = 351/402 = 0.873, c = 0.1: 3.0875 at k = 9, 3.0803 at 10, 3.0704 at 8.
      {token_stats(100, 400, 350, 0.1), 8},
      // a = 41/92 = 0.446, c = 0.4: 1.033 at k = 2 falls to 0.914 at 3.
      {token_stats(100, 400, 40, 0.4), 1},
  };
  for (const TokenCase& c : cases) {
    scenario.target_stats = c.stats;
    const Outcome o = run(scenario);
    EXPECT_EQ(o.completion.text, "a\nb\nc");
    ASSERT_FALSE(o.target_draft_lengths.empty());
    for (const int length : o.target_draft_lengths) EXPECT_EQ(length, c.draft_length);
    EXPECT_EQ(o.steps.token_rounds, o.steps.rounds);
    EXPECT_DOUBLE_EQ(o.steps.mean_draft_length(), c.draft_length);
  }
  // A drafted token measured dearer than a target forward (a busy machine):
  // the shortest draft, not an error.
  scenario.target_stats = token_stats(100, 400, 300, 1.5);
  const Outcome dear = run(scenario);
  EXPECT_EQ(dear.completion.text, "a\nb\nc");
  ASSERT_FALSE(dear.target_draft_lengths.empty());
  for (const int length : dear.target_draft_lengths) EXPECT_EQ(length, 1);
  // Before the target engine has drafted, and with a fixed gamma, its own length.
  for (const bool adaptive : {true, false}) {
    scenario.lookahead.adaptive = adaptive;
    scenario.target_stats = adaptive ? EngineStats{} : token_stats(100, 800, 760, 0.02);
    const Outcome o = run(scenario);
    for (const int length : o.target_draft_lengths) EXPECT_EQ(length, 0);
    EXPECT_EQ(o.steps.token_rounds, 0);
  }
}

}  // namespace
}  // namespace seed::spec
