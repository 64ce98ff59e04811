#include "spec/lookahead/lookahead_planner.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "spec/api/acceptance.h"
#include "spec/engine/line_fit.h"
#include "spec/lookahead/lookahead_theory.h"

namespace seed::spec {

void LookaheadPlanner::add_draft_call(double seconds, bool steady) {
  (steady ? draft_calls_ : cold_draft_calls_).add(seconds);
}

void LookaheadPlanner::add_target_call(int steps, double seconds, bool steady) {
  (steady ? target_calls_ : cold_target_calls_)[steps].add(seconds);
}

void LookaheadPlanner::add_forwards(const EngineStats& before, const EngineStats& after) {
  forward_cost_.add(after.target_forwards - before.target_forwards, after.drafted_tokens - before.drafted_tokens,
                    after.target_busy_s - before.target_busy_s);
}

double LookaheadPlanner::target_call_seconds(int k) const {
  const std::map<int, Calls>& measured = target_measured();
  const auto known = measured.find(k);
  if (known != measured.end()) return known->second.mean();
  if (measured.size() == 1) return measured.begin()->second.mean();
  // Least squares T(k) = a + b k over the means seen, never below the
  // cheapest seen.
  LineFit fit;
  double cheapest = std::numeric_limits<double>::max();
  for (const auto& [size, calls] : measured) {
    fit.add(size, calls.mean());
    cheapest = std::min(cheapest, calls.mean());
  }
  return std::max(cheapest, fit.mean_y() + fit.slope() * (k - fit.mean_x()));
}

int LookaheadPlanner::tree_size(int gamma) const {
  int nodes = 1, level = 1;
  for (int depth = 1; depth <= gamma; ++depth) nodes += level *= settings_.width;
  return nodes;
}

LookaheadPlanner::RoundPlan LookaheadPlanner::next_round(const StepStats& steps) const {
  if (!settings_.adaptive || !measured()) return {settings_.gamma, false};
  // One early rejection must not rule drafting out.
  const double alpha = smoothed_acceptance_rate(steps.accepted_steps, steps.drafted_steps);
  const double draft_call_s = draft_measured().mean();
  int best = 0;
  double best_rate = 0;
  for (int gamma = 0; gamma <= settings_.max_gamma; ++gamma) {
    // Steps a round commits on average (the accepted drafted prefix and the
    // target's step after it) over what the round costs.
    const double rate = tau_max(alpha, gamma) / (gamma * draft_call_s + target_call_seconds(tree_size(gamma)));
    if (rate > best_rate) best = gamma, best_rate = rate;
  }
  // Every kExploreEvery rounds, a neighbour of the best (one more drafted
  // step, then one fewer): its cost and the acceptance stay measured.
  const int64_t round = steps.rounds;
  if (round % kExploreEvery == kExploreEvery - 1) {
    return {(round / kExploreEvery) % 2 == 0 ? std::min(best + 1, settings_.max_gamma) : std::max(best - 1, 0), false};
  }
  return {best, best == 0};
}

int LookaheadPlanner::async_gamma() const {
  if (!settings_.adaptive || !measured()) return settings_.gamma;
  Calls target;
  for (const auto& [size, calls] : target_measured()) target.seconds += calls.seconds, target.count += calls.count;
  const double ratio = target.mean() / draft_measured().mean();
  return std::clamp(static_cast<int>(std::ceil(ratio)), 1, settings_.max_gamma);
}

int LookaheadPlanner::token_draft_length(const EngineStats& target) const {
  if (!settings_.adaptive) return 0;
  if (target.drafted_tokens == 0 || target.target_forwards == 0 || target.draft_s <= 0 || target.target_busy_s <= 0) {
    return 0;
  }
  // As for steps, an estimate one early rejection does not rule out.
  const double alpha =
      smoothed_acceptance_rate(target.accepted_tokens, target.accepted_tokens + target.rejections);
  // A drafted token's cost in forwards that verify nothing: its draft step
  // and what verifying it adds to the forward.
  const double forward_s = forward_cost_.empty() ? target.target_busy_s / double(target.target_forwards)
                                                 : forward_cost_.base_s();
  const double cost = target.draft_s / double(target.drafted_tokens) / forward_s + forward_cost_.verify_token_ratio();
  // A drafted token measured as dear as a target forward (a slow draft, or
  // a busy machine): no draft length pays, so the shortest.
  if (cost >= 1) return 1;
  int best = 2;
  for (int k = 3; k <= kMaxTokenDraft + 1; ++k) {
    if (token_speedup(k, alpha, cost) > token_speedup(best, alpha, cost)) best = k;
  }
  return best - 1;
}

}  // namespace seed::spec
