// LookaheadEngine on scripted engines: which steps a round commits for
// given drafts and verifier answers, EOS and max_new_tokens inside a step, a
// delimiter inside a multi-character token; and the step verifiers.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "spec/lookahead/hidden_state_verifier.h"
#include "spec/lookahead/judge_verifier.h"
#include "spec/lookahead/lookahead_engine.h"
#include "spec/engine/request_output.h"
#include "tests/throws_error.h"

namespace seed::spec {
namespace {

// One token per byte, plus one multi-character token ("!\nZ", holding the
// delimiter) and EOS.
class ByteTokenizer : public models::Tokenizer {
 public:
  static constexpr int32_t kPiece = 256, kEos = 257;
  static constexpr const char* kPieceText = "!\nZ";
  std::vector<int32_t> encode(std::string_view text, bool) const override {
    std::vector<int32_t> out;
    for (size_t i = 0; i < text.size(); ++i) {
      if (text.substr(i, 3) == kPieceText) {
        out.push_back(kPiece);
        i += 2;
      } else {
        out.push_back(static_cast<unsigned char>(text[i]));
      }
    }
    return out;
  }
  std::string decode(const std::vector<int32_t>& ids) const override {
    std::string out;
    for (const int32_t id : ids) {
      if (id == kPiece) out += kPieceText;
      else if (id < 256) out += static_cast<char>(id);
    }
    return out;
  }
  int64_t vocab_size() const override { return 258; }
  int32_t bos_id() const override { return -1; }
  int32_t eos_id() const override { return kEos; }
};

// A real Engine that replays a script of steps: after a prompt whose
// generated part holds k delimiters it writes step k (then EOS if that step
// has no delimiter, or if the script has run out), through RequestOutput,
// so stop strings and max_new_tokens behave as in every engine. Given
// several scripts, the i-th request of a call with the same prompt follows
// script i (the last one beyond): how alternatives drafted for one step
// differ.
class StepScriptEngine : public Engine {
 public:
  // `delay`: how long each call takes (what the adaptive lookahead weighs);
  // `prefill_delay`: how much longer a call takes when it holds a request
  // with nothing generated yet (as a model reads its prompt).
  StepScriptEngine(std::shared_ptr<const models::Tokenizer> tokenizer, size_t prompt_length,
                   std::vector<std::vector<std::string>> scripts, std::chrono::microseconds delay = {},
                   std::chrono::microseconds prefill_delay = {})
      : tokenizer_(std::move(tokenizer)),
        prompt_length_(prompt_length),
        scripts_(std::move(scripts)),
        delay_(delay),
        prefill_delay_(prefill_delay) {}

  using Engine::generate;
  std::vector<Completion> generate(const std::vector<GenRequest>& requests, const CompletionCallback&) override {
    calls += 1;
    std::this_thread::sleep_for(delay_);
    if (std::any_of(requests.begin(), requests.end(),
                    [&](const GenRequest& r) { return r.prompt_tokens.size() == prompt_length_; })) {
      std::this_thread::sleep_for(prefill_delay_);
    }
    for (const GenRequest& r : requests) {
      draft_lengths.push_back(r.draft_length);
      temperatures.push_back(r.sampling.temperature);
    }
    if (on_call) on_call(reported, requests.front().draft_length);
    std::vector<Completion> out;
    std::map<std::vector<int32_t>, size_t> seen;
    for (const GenRequest& r : requests) {
      const std::vector<std::string>& steps = scripts_[std::min(seen[r.prompt_tokens]++, scripts_.size() - 1)];
      const std::vector<int32_t> generated(r.prompt_tokens.begin() + static_cast<long>(prompt_length_),
                                           r.prompt_tokens.end());
      const std::string text = tokenizer_->decode(generated);
      const size_t k = static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
      RequestOutput output(tokenizer_.get(), {ByteTokenizer::kEos}, r.max_new_tokens, r.stop);
      std::vector<int32_t> tokens = k < steps.size() ? tokenizer_->encode(steps[k], false) : std::vector<int32_t>{};
      if (k >= steps.size() || steps[k].find('\n') == std::string::npos) tokens.push_back(ByteTokenizer::kEos);
      for (const int32_t t : tokens) {
        if (output.push(t)) break;
      }
      if (!output.finished()) output.end(FinishReason::kLength);
      out.push_back(output.take());
    }
    return out;
  }
  std::string name() const override { return "script"; }
  EngineStats stats() const override { return reported; }
  void reset_stats() override {}

  int calls = 0;
  std::vector<int> draft_lengths;  // each request's GenRequest::draft_length
  std::vector<float> temperatures;  // each request's sampling temperature
  EngineStats reported;            // what stats() says (token acceptance and costs)
  // Called with `reported` and the first request's draft length at each call.
  std::function<void(EngineStats&, int)> on_call;

 private:
  std::shared_ptr<const models::Tokenizer> tokenizer_;
  size_t prompt_length_;
  std::vector<std::vector<std::string>> scripts_;
  std::chrono::microseconds delay_;
  std::chrono::microseconds prefill_delay_;
};

struct Outcome {
  Completion completion;
  StepStats steps;
  int draft_calls = 0;
  int target_calls = 0;
  std::vector<int> target_draft_lengths;  // of every target request
  std::vector<float> draft_temperatures, target_temperatures;  // of every request
};

constexpr const char* kPrompt = "Q?\n";

// Calls of the scripted engines take these times.
struct Delays {
  std::chrono::microseconds draft{0}, target{0};
};

struct Scenario {
  std::vector<std::string> target_steps;
  std::vector<std::vector<std::string>> draft_scripts;  // one per alternative
  LookaheadSettings lookahead;
  int64_t max_new_tokens = 100;
  std::string verifier = "exact";
  Delays delays;
  float temperature = 0;
  EngineStats target_stats;  // what the target engine reports
};

Outcome run(const Scenario& scenario) {
  auto tokenizer = std::make_shared<const ByteTokenizer>();
  const size_t prompt_length = tokenizer->encode(kPrompt, false).size();
  auto draft = std::make_unique<StepScriptEngine>(tokenizer, prompt_length, scenario.draft_scripts, scenario.delays.draft);
  auto target = std::make_unique<StepScriptEngine>(tokenizer, prompt_length,
                                                   std::vector<std::vector<std::string>>{scenario.target_steps},
                                                   scenario.delays.target);
  StepScriptEngine* d = draft.get();
  StepScriptEngine* t = target.get();
  t->reported = scenario.target_stats;
  RunSettings settings;
  settings.tokenizer = tokenizer;
  settings.stop_tokens = {ByteTokenizer::kEos};
  LookaheadEngine engine(std::move(draft), std::move(target), settings, scenario.lookahead,
                         make_step_verifier(scenario.verifier));
  GenRequest request;
  request.prompt = kPrompt;
  request.max_new_tokens = scenario.max_new_tokens;
  request.sampling.temperature = scenario.temperature;
  Outcome outcome;
  outcome.completion = engine.generate({request}).front();
  outcome.steps = engine.stats().steps;
  outcome.draft_calls = d->calls;
  outcome.target_calls = t->calls;
  outcome.target_draft_lengths = t->draft_lengths;
  outcome.draft_temperatures = d->temperatures;
  outcome.target_temperatures = t->temperatures;
  return outcome;
}

// Synchronous, one alternative per step; `adaptive`: gamma chosen from
// these call times.
Outcome run(const std::vector<std::string>& target_steps, const std::vector<std::string>& draft_steps, int gamma,
            int64_t max_new_tokens = 100, const std::string& verifier = "exact",
            std::optional<Delays> adaptive = std::nullopt) {
  Scenario scenario;
  scenario.target_steps = target_steps;
  scenario.draft_scripts = {draft_steps};
  scenario.lookahead.gamma = gamma;
  scenario.lookahead.adaptive = adaptive.has_value();
  scenario.max_new_tokens = max_new_tokens;
  scenario.verifier = verifier;
  scenario.delays = adaptive.value_or(Delays{});
  return run(scenario);
}

TEST(LookaheadEngine, AllDraftsAcceptedCommitGammaStepsAndTheTargetsBonusStep) {
  const std::vector<std::string> steps = {"a1\n", "b2\n", "c3\n", "d4\n", "e5\n", "f6\n"};
  const Outcome o = run(steps, steps, 2);
  EXPECT_EQ(o.completion.text, "a1\nb2\nc3\nd4\ne5\nf6\n");
  EXPECT_EQ(o.completion.finish, FinishReason::kEos);
  // Rounds 1 and 2 commit three steps each (two drafted, one bonus); round 3
  // finds the draft at EOS (never accepted) and commits the target's EOS.
  EXPECT_EQ(o.steps.rounds, 3);
  EXPECT_EQ(o.target_calls, 3);
  EXPECT_EQ(o.steps.accepted_steps, 4);
  EXPECT_EQ(o.steps.drafted_steps, 5);
  EXPECT_EQ(o.steps.committed_steps, 7);
}

TEST(LookaheadEngine, AMismatchCommitsTheTargetsStepThereAndDropsTheRest) {
  const Outcome o = run({"a1\n", "b2\n", "c3\n"}, {"a1\n", "XX\n", "c3\n"}, 3);
  // Round 1: a1 accepted, XX rejected for b2; c3 (drafted after XX) is not
  // compared. Round 2: c3 accepted, then the target's EOS. Round 3: none
  // left: the draft is at EOS, the target's EOS ends it.
  EXPECT_EQ(o.completion.text, "a1\nb2\nc3\n");
  EXPECT_EQ(o.completion.finish, FinishReason::kEos);
  EXPECT_EQ(o.steps.rounds, 2);
  EXPECT_EQ(o.steps.drafted_steps, 4);
  EXPECT_EQ(o.steps.accepted_steps, 2);
}

TEST(LookaheadEngine, GammaZeroIsTheTargetAloneStepByStep) {
  const Outcome o = run({"a1\n", "b2\n"}, {"zz\n"}, 0);
  EXPECT_EQ(o.completion.text, "a1\nb2\n");
  EXPECT_EQ(o.draft_calls, 0);
  EXPECT_EQ(o.steps.rounds, 3);  // a1, b2, EOS
  EXPECT_EQ(o.steps.drafted_steps, 0);
}

std::vector<std::string> numbered_steps(int n) {
  std::vector<std::string> steps;
  for (int i = 0; i < n; ++i) steps.push_back("s" + std::to_string(i) + "\n");
  return steps;
}

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

TEST(LookaheadEngine, ADraftedStepThatEndsAtEosIsNeverAccepted) {
  // The draft ends the answer early ("a1" then EOS); the target goes on.
  const Outcome o = run({"a1\n", "b2\n"}, {"a1"}, 2);
  EXPECT_EQ(o.completion.text, "a1\nb2\n");
  EXPECT_EQ(o.steps.accepted_steps, 0);
}

TEST(LookaheadEngine, MaxNewTokensEndsTheRequestMidStep) {
  const Outcome o = run({"a1\n", "b2\n", "c3\n"}, {"a1\n", "b2\n", "c3\n"}, 2, 4);
  // a1\n (3 tokens) is accepted; the drafted "b" was cut by the budget, so
  // the target's "b" is committed and the request ends at 4 tokens.
  EXPECT_EQ(o.completion.text, "a1\nb");
  EXPECT_EQ(o.completion.finish, FinishReason::kLength);
  EXPECT_EQ(o.completion.tokens.size(), 4u);
  EXPECT_EQ(o.steps.rounds, 1);
}

TEST(LookaheadEngine, ADelimiterInsideAMultiCharacterTokenEndsTheStepWithTheWholeToken) {
  // "ok!\nZ" is "o", "k" and the one token "!\nZ": the step ends after it,
  // "Z" and all, and the next step starts after the "Z".
  const Outcome o = run({"ok!\nZ", "b2\n"}, {"ok!\nZ", "b2\n"}, 1);
  EXPECT_EQ(o.completion.text, "ok!\nZb2\n");
  EXPECT_EQ(o.steps.accepted_steps, 1);
}

TEST(LookaheadEngine, TheNormalizedVerifierAcceptsTheSameStepWrittenDifferently) {
  const std::vector<std::string> target = {"x = 3.5\n", "y = 1000\n"};
  const std::vector<std::string> draft = {"x  =  3.50\n", "y = 1,000\n"};
  EXPECT_EQ(run(target, draft, 2, 100, "exact").steps.accepted_steps, 0);
  const Outcome o = run(target, draft, 2, 100, "normalized");
  EXPECT_EQ(o.steps.accepted_steps, 2);
  EXPECT_EQ(o.completion.text, "x  =  3.50\ny = 1,000\n");  // what is committed is the draft's text
}

std::string target_alone(const std::vector<std::string>& steps) { return run(steps, steps, 0).completion.text; }

TEST(LookaheadEngine, WidthTriesEachAlternativeAndCommitsTheFirstThatMatches) {
  const auto steps = numbered_steps(6);
  Scenario scenario;
  scenario.target_steps = steps;
  // The first alternative is always wrong, the second always right.
  scenario.draft_scripts = {std::vector<std::string>(6, "XX\n"), steps};
  scenario.lookahead.gamma = 2;
  scenario.temperature = 1;
  const Outcome one = run(scenario);
  scenario.lookahead.width = 2;
  const Outcome two = run(scenario);
  EXPECT_EQ(one.completion.text, target_alone(steps));
  EXPECT_EQ(two.completion.text, target_alone(steps));
  EXPECT_EQ(one.steps.accepted_steps, 0);
  // Width 2: rounds 1 and 2 accept two drafted steps each and commit the
  // target's bonus step; round 3 drafts at EOS and commits the target's EOS.
  EXPECT_EQ(two.steps.accepted_steps, 4);
  EXPECT_EQ(two.steps.rounds, 3);
}

TEST(LookaheadEngine, AGreedyRequestDraftsOneAlternative) {
  const auto steps = numbered_steps(4);
  Scenario scenario;
  scenario.target_steps = steps;
  scenario.draft_scripts = {std::vector<std::string>(4, "XX\n"), steps};
  scenario.lookahead.gamma = 2;
  scenario.lookahead.width = 2;
  const Outcome o = run(scenario);  // temperature 0: the alternatives would be one text
  EXPECT_EQ(o.completion.text, target_alone(steps));
  EXPECT_EQ(o.steps.accepted_steps, 0);
}

TEST(LookaheadEngine, ASampledRequestDraftsItsFirstAlternativeGreedilyAndSamplesTheRest) {
  const auto steps = numbered_steps(4);
  Scenario scenario;
  scenario.target_steps = steps;
  scenario.draft_scripts = {steps, std::vector<std::string>(4, "XX\n")};
  scenario.lookahead.gamma = 2;
  scenario.lookahead.width = 2;
  scenario.temperature = 0.7f;
  const Outcome o = run(scenario);
  ASSERT_FALSE(o.draft_temperatures.empty());
  ASSERT_EQ(o.draft_temperatures.size() % 2, 0u);
  for (size_t i = 0; i < o.draft_temperatures.size(); i += 2) {
    EXPECT_EQ(o.draft_temperatures[i], 0.0f) << "draft request " << i;
    EXPECT_EQ(o.draft_temperatures[i + 1], 0.7f) << "draft request " << i + 1;
  }
  for (const float t : o.target_temperatures) EXPECT_EQ(t, 0.7f);
}

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
