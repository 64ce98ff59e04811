#include "spec/lookahead/lookahead_theory.h"

#include <algorithm>
#include <cmath>

#include "models/base/error.h"

namespace seed::spec {
namespace {

// Acceptance 1 divides by zero in the closed forms; a hair below it is the
// limit to well within double precision.
double clamp_alpha(double alpha) { return std::clamp(alpha, 0.0, 1.0 - 1e-9); }

void check(int k, double alpha, double cost) {
  SEED_CHECK(k >= 1, kInvalidArgument) << "lookahead model: parallel dimension " << k << " < 1";
  SEED_CHECK(alpha >= 0 && alpha <= 1, kInvalidArgument) << "lookahead model: acceptance " << alpha << " outside [0, 1]";
  SEED_CHECK(cost > 0 && cost < 1, kInvalidArgument) << "lookahead model: cost ratio " << cost << " outside (0, 1)";
}

int async_depth_limit(double cost) { return static_cast<int>(std::ceil(1.0 / cost - 1e-12)); }

}  // namespace

double token_speedup(int k, double alpha, double cost) {
  check(k, alpha, cost);
  const double a = clamp_alpha(alpha);
  return (1 - std::pow(a, k)) / ((1 - a) * (1 - cost + cost * k));
}

double sync_step_speedup(int k, double alpha, double cost) { return token_speedup(k, alpha, cost); }

double async_step_speedup(int k, double alpha, double cost) {
  check(k, alpha, cost);
  const double a = clamp_alpha(alpha);
  if (k >= async_depth_limit(cost)) return 1 / (cost + (1 - cost) * (1 - a));
  const double ak = std::pow(a, k);
  return (1 - ak) / ((1 - a) + cost * (a - ak * a - k * (1 - a) * ak));
}

LookaheadPlan best_lookahead_plan(int budget, bool async, double alpha1, double cost1, double alpha2, double cost2) {
  SEED_CHECK(budget >= 1, kInvalidArgument) << "lookahead model: parallelism budget " << budget << " < 1";
  LookaheadPlan best;
  best.speedup = 0;
  for (int k1 = 1; k1 <= budget; ++k1) {
    const int width = async ? std::min(k1, async_depth_limit(cost1)) : k1;
    const double f = async ? async_step_speedup(k1, alpha1, cost1) : sync_step_speedup(k1, alpha1, cost1);
    for (int k2 = 1; width * k2 <= budget; ++k2) {
      const double h = f * token_speedup(k2, alpha2, cost2);
      if (h > best.speedup * (1 + 1e-12)) best = {k1, k2, h};
    }
  }
  return best;
}

}  // namespace seed::spec
