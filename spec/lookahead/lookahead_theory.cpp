#include "spec/lookahead/lookahead_theory.h"

#include "models/base/error.h"
#include "spec/api/acceptance.h"

namespace seed::spec {

double token_speedup(int k, double alpha, double cost) {
  SEED_CHECK(k >= 1, kInvalidArgument) << "lookahead model: parallel dimension " << k << " < 1";
  SEED_CHECK(alpha >= 0 && alpha <= 1, kInvalidArgument) << "lookahead model: acceptance " << alpha << " outside [0, 1]";
  SEED_CHECK(cost > 0 && cost < 1, kInvalidArgument) << "lookahead model: cost ratio " << cost << " outside (0, 1)";
  return tau_max(alpha, k - 1) / (1 - cost + cost * k);
}

}  // namespace seed::spec
