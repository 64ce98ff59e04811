// LookaheadEngine: step-level speculation (Lookahead Reasoning, Fu et al.
// 2025, Algorithm 1, synchronous, one branch).
//
// A step is the text up to and including a delimiter ("\n" by default).
// Each round, for every request in flight:
//   1. the draft engine writes up to gamma steps, one after another (one
//      batched call per step over all requests);
//   2. the target engine writes, in one batched call, the step that
//      follows each drafted prefix: gamma + 1 steps per request;
//   3. the verifier compares each drafted step with the target's step after
//      the same text; the drafted steps up to the first mismatch are
//      committed, then the target's step at that point (so every round
//      commits at least one target step, and all gamma accepted earn the
//      target's next step as a bonus).
// The two engines are any seed engines, so token-level speculation runs
// inside each step when the target engine is sd or seed. Not lossless: a
// committed drafted step is the verifier's judgement, not the target's
// distribution; report accuracy beside speed.
// A drafted step cut short (no delimiter within max_step_tokens, or the
// request's budget) is never accepted; a target step is committed as it is.
// Adaptive gamma: each round takes the lookahead that commits the most
// steps per second by what was measured so far: the step acceptance, a
// drafted step's time, and the target call's time for each number of
// steps per request (fitted by a line where not yet seen; the notes'
// model, lookahead_theory.h, assumes it constant, which holds on a GPU with
// batch headroom and not on a CPU). That can be 0: the target alone, which
// then writes the rest of each request in one call. One round in
// kExploreEvery tries a neighbour of the choice instead, so that costs and
// acceptance stay measured.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "spec/engine.h"
#include "spec/request_run.h"
#include "spec/step_verifier.h"

namespace seed::spec {

struct LookaheadSettings {
  int gamma = 2;                 // drafted steps per round (adaptive: the first rounds')
  bool adaptive = false;         // choose gamma each round from what was measured
  int max_gamma = 8;             // adaptive: the largest gamma considered
  std::string delimiter = "\n";  // ends a step
  int64_t max_step_tokens = 64;  // a step longer than this is cut
};

struct StepStats {
  int64_t rounds = 0;           // rounds (one target call each)
  int64_t request_rounds = 0;   // requests in flight, summed over rounds
  int64_t drafted_steps = 0;    // drafted steps compared with the target's
  int64_t accepted_steps = 0;   // of those, committed
  int64_t committed_steps = 0;  // drafted and target steps committed
  int64_t gamma_sum = 0;        // the rounds' gammas, summed
  double mean_gamma() const { return rounds ? static_cast<double>(gamma_sum) / static_cast<double>(rounds) : 0; }
  // Steps a request commits per round it takes part in.
  double steps_per_round() const {
    return request_rounds ? static_cast<double>(committed_steps) / static_cast<double>(request_rounds) : 0;
  }
  double acceptance() const {
    return drafted_steps ? static_cast<double>(accepted_steps) / static_cast<double>(drafted_steps) : 0;
  }
};

class LookaheadEngine : public Engine {
 public:
  // `settings` supplies the tokenizer (required: steps are text) and EOS.
  LookaheadEngine(std::unique_ptr<Engine> draft, std::unique_ptr<Engine> target, RunSettings settings,
                  LookaheadSettings lookahead, std::unique_ptr<StepVerifier> verifier);

  using Engine::generate;
  std::vector<Completion> generate(const std::vector<GenRequest>& requests,
                                   const CompletionCallback& on_complete) override;
  std::string name() const override { return "lookahead(" + target_->name() + ")"; }
  // The target engine's work, with the committed tokens as generated.
  EngineStats stats() const override;
  void reset_stats() override;
  StepStats step_stats() const { return steps_; }
  const LookaheadSettings& settings() const { return lookahead_; }
  const StepVerifier& verifier() const { return *verifier_; }

 private:
  struct Run;

  // One round for every running request: draft, target, verify, commit.
  void round(std::vector<Run>& runs);
  // This round's gamma (the setting, or the adaptive choice), and whether
  // the target writes each request to its end instead of one step.
  struct RoundPlan {
    int gamma = 0;
    bool to_the_end = false;
  };
  RoundPlan next_round() const;
  // Measured, or estimated, time of a target call with k steps per request.
  double target_call_seconds(int k) const;

  static constexpr int kExploreEvery = 8;

  std::unique_ptr<Engine> draft_;
  std::unique_ptr<Engine> target_;
  RunSettings settings_;
  LookaheadSettings lookahead_;
  std::unique_ptr<StepVerifier> verifier_;
  StepStats steps_;
  // Wall time of the draft engine's calls (one drafted step for each
  // request) and of the target engine's calls by steps per request, for the
  // adaptive gamma.
  struct Calls {
    double seconds = 0;
    int64_t count = 0;
    double mean() const { return seconds / double(count); }
  };
  double draft_call_s_ = 0;
  int64_t draft_calls_ = 0;
  std::map<int, Calls> target_calls_;
  int64_t generated_tokens_ = 0;
  int64_t requests_ = 0;
  double wall_s_ = 0;
};

}  // namespace seed::spec
