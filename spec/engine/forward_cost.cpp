#include "spec/engine/forward_cost.h"

#include <algorithm>

namespace seed::spec {

void ForwardCost::add(int64_t forwards, int64_t drafted, double seconds) {
  if (forwards <= 0) return;
  const double w = double(forwards);
  fit_.add(double(drafted) / w, seconds / w, w);
}

double ForwardCost::per_token_s() const { return fit_.cost_slope(/*min_variance=*/1); }

double ForwardCost::base_s() const {
  if (empty()) return 0;
  return fit_.mean_y() - per_token_s() * fit_.mean_x();
}

double ForwardCost::verify_token_ratio() const {
  const double per_token = per_token_s();
  return per_token > 0 ? per_token / base_s() : 0;
}

}  // namespace seed::spec
