// The median of a sample, as the benchmarks and the step-cost measurement
// report times: robust to the odd run a busy machine slows down.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

namespace seed {

// The middle value of `values`, or the mean of the two middle ones for an
// even count. REQUIRES values non-empty.
inline double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

}  // namespace seed
