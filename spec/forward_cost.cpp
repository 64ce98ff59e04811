#include "spec/forward_cost.h"

#include <algorithm>

namespace seed::spec {

void ForwardCost::add(int64_t forwards, int64_t drafted, double seconds) {
  if (forwards <= 0) return;
  const double w = double(forwards);
  const double x = double(drafted) / w;
  const double y = seconds / w;
  forwards_ += w, x_ += w * x, y_ += w * y, xx_ += w * x * x, xy_ += w * x * y;
}

double ForwardCost::per_token_s() const {
  if (forwards_ == 0) return 0;
  const double mean_x = x_ / forwards_;
  const double variance = xx_ / forwards_ - mean_x * mean_x;
  if (variance < 1) return 0;
  const double slope = (xy_ / forwards_ - mean_x * y_ / forwards_) / variance;
  // A slope that would make an empty forward cost nothing is noise.
  return std::clamp(slope, 0.0, y_ / forwards_ / std::max(mean_x, 1.0) * 0.9);
}

double ForwardCost::base_s() const {
  if (forwards_ == 0) return 0;
  return (y_ - per_token_s() * x_) / forwards_;
}

}  // namespace seed::spec
