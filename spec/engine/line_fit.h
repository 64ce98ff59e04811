// LineFit: the weighted least-squares line y = a + b x through points added
// one at a time (running sums, no storage).
#pragma once

#include <algorithm>

namespace seed::spec {

class LineFit {
 public:
  void add(double x, double y, double weight = 1) {
    w_ += weight, x_ += weight * x, y_ += weight * y, xx_ += weight * x * x, xy_ += weight * x * y;
  }
  // Every point's weight times `factor`: older points count less.
  void scale(double factor) { w_ *= factor, x_ *= factor, y_ *= factor, xx_ *= factor, xy_ *= factor; }
  double weight() const { return w_; }
  double mean_x() const { return x_ / w_; }
  double mean_y() const { return y_ / w_; }
  double x_variance() const { return xx_ / w_ - mean_x() * mean_x(); }
  // 0 where the points share one x.
  double slope() const {
    const double variance = x_variance();
    return variance > 0 ? (xy_ / w_ - mean_x() * mean_y()) / variance : 0;
  }
  // The slope of a cost (seconds by tokens or rows): 0 until the points
  // spread over `min_variance`, never below 0, and never so steep that the
  // cost at x = 0 would fall under a tenth of the mean (that is noise).
  double cost_slope(double min_variance) const {
    if (w_ == 0 || x_variance() < min_variance) return 0;
    return std::clamp(slope(), 0.0, mean_y() / std::max(mean_x(), 1.0) * 0.9);
  }
  // The cost at `x` on that slope. REQUIRES weight() > 0.
  double cost_at(double x, double min_variance) const { return mean_y() + cost_slope(min_variance) * (x - mean_x()); }

 private:
  double w_ = 0, x_ = 0, y_ = 0, xx_ = 0, xy_ = 0;
};

}  // namespace seed::spec
