// LookaheadPlanner: the adaptive lookahead's choices (LookaheadSettings::
// adaptive), made from what the engine measured: the step acceptance, a
// draft call's time, the target call's time for each number of steps per
// request (fitted by a line where not yet seen), and the target engine's
// token acceptance and forwards (ForwardCost).
//   synchronous   each round, the gamma that commits the most steps per
//                 second; 0 is the target alone, which then writes the
//                 rest of each request in one call. One round in
//                 kExploreEvery tries a neighbour instead, so that costs
//                 and acceptance stay measured. The notes' model
//                 (lookahead_theory.h) assumes a target call's time
//                 constant, which holds on a GPU with batch headroom and
//                 not on a CPU: hence the measured times.
//   asynchronous  the depth the notes' theory makes best, ceil(target call
//                 / draft call).
//   both          the target engine's token draft length (a chain): the
//                 one the token-level model makes best from its measured
//                 acceptance and the cost of a drafted token over a target
//                 forward: its draft step plus what verifying it adds to
//                 the forward (ForwardCost::verify_token_ratio).
// A call that reads a request's prompt for the first time also prefills
// it, so such "cold" calls are measured apart and count only until a
// steady call of the same engine is measured. Not thread-safe.
#pragma once

#include <cstdint>
#include <map>

#include "spec/api/engine.h"
#include "spec/engine/forward_cost.h"
#include "spec/lookahead/lookahead_settings.h"

namespace seed::spec {

class LookaheadPlanner {
 public:
  explicit LookaheadPlanner(const LookaheadSettings& settings) : settings_(settings) {}

  // A draft engine call (one level of the trees) took `seconds`; `steady`:
  // it read no request's prompt for the first time.
  void add_draft_call(double seconds, bool steady);
  // A target engine call with `steps` steps per request took `seconds`.
  void add_target_call(int steps, double seconds, bool steady);
  // The target engine's stats before and after a steady call.
  void add_forwards(const EngineStats& before, const EngineStats& after);

  struct RoundPlan {
    int gamma = 0;
    bool to_the_end = false;  // the target writes each request to its end instead of one step
  };
  // Synchronous: this round's gamma (the setting unless adaptive), after
  // the rounds `steps` counts.
  RoundPlan next_round(const StepStats& steps) const;
  // Asynchronous: the setting unless adaptive, else ceil(target call /
  // draft call) within [1, max_gamma].
  int async_gamma() const;
  // The token draft length of the next target call, from the target
  // engine's stats; 0 (the target engine's own) unless adaptive or before
  // it has drafted.
  int token_draft_length(const EngineStats& target) const;

  static constexpr int kExploreEvery = 8;
  static constexpr int kMaxTokenDraft = 16;

 private:
  struct Calls {
    double seconds = 0;
    int64_t count = 0;
    void add(double call_seconds) { seconds += call_seconds, count += 1; }
    double mean() const { return seconds / double(count); }
  };
  const Calls& draft_measured() const { return draft_calls_.count ? draft_calls_ : cold_draft_calls_; }
  const std::map<int, Calls>& target_measured() const {
    return target_calls_.empty() ? cold_target_calls_ : target_calls_;
  }
  bool measured() const { return draft_measured().count > 0 && !target_measured().empty(); }
  // Measured, or estimated, time of a target call with k steps per request.
  double target_call_seconds(int k) const;
  // Nodes per request of a full tree `gamma` deep.
  int tree_size(int gamma) const;

  LookaheadSettings settings_;
  Calls draft_calls_, cold_draft_calls_;
  std::map<int, Calls> target_calls_, cold_target_calls_;  // by steps per request
  ForwardCost forward_cost_;  // the target engine's forwards, by drafted tokens verified
};

}  // namespace seed::spec
