// ForwardCost: a target forward's time as a line in the drafted tokens it
// verifies, t(x) = base + per_token * x, fitted by weighted least squares
// over measured forwards. The token-level model of speculation
// (spec/lookahead/lookahead_theory.h) takes a forward to cost the same
// whatever it verifies, which holds on a GPU with headroom; on a CPU a
// forward's cost grows with its tokens, and a drafted token then also costs
// its share of the verification: verify_token_ratio(), the one definition
// of that share, which the pruned trees' thresholds (step_cost.h) and the
// adaptive lookahead (spec/lookahead/lookahead_planner.h) both read.
#pragma once

#include <cstdint>

#include "spec/engine/line_fit.h"

namespace seed::spec {

class ForwardCost {
 public:
  // `forwards` forwards that verified `drafted` drafted tokens in `seconds`
  // (one call's worth: a point at drafted / forwards, weighted by forwards).
  void add(int64_t forwards, int64_t drafted, double seconds);
  bool empty() const { return fit_.weight() == 0; }
  // A forward that verifies no drafted token (the mean forward until a
  // slope can be fitted).
  double base_s() const;
  // What each drafted token adds to a forward: 0 until the points spread
  // over a token or more (a standard deviation), never below 0.
  double per_token_s() const;
  // per_token_s() over base_s(): what verifying a drafted token adds to a
  // target forward, in forwards that verify none. About 0 on a GPU with
  // headroom, a tenth or more on a CPU; 0 while nothing is measured.
  double verify_token_ratio() const;

 private:
  LineFit fit_;  // seconds a forward by drafted tokens a forward, weighted by forwards
};

}  // namespace seed::spec
