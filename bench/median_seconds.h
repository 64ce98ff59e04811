// Median wall time of a measured call, as every `seed bench` figure is timed.
#pragma once

#include <chrono>
#include <functional>
#include <vector>

#include "models/base/median.h"

namespace seed::bench {

// Median wall time of `fn` over `repeats` runs, after one warm-up run.
inline double median_seconds(int repeats, const std::function<void()>& fn) {
  fn();
  std::vector<double> times;
  for (int r = 0; r < repeats; ++r) {
    const auto start = std::chrono::steady_clock::now();
    fn();
    times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return median(times);
}

}  // namespace seed::bench
