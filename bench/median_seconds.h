// Median wall time of a measured call, as every `seed bench` figure is timed.
#pragma once

#include <chrono>
#include <functional>
#include <vector>

#include "models/base/median.h"

namespace seed::bench {

// Median wall times of each of `fns` over `repeats` turns, each running
// once a turn after one warm-up run of each: figures compared with each
// other, so that a machine whose speed drifts over seconds slows each
// alike.
inline std::vector<double> median_seconds_in_turns(int repeats, const std::vector<std::function<void()>>& fns) {
  for (const auto& fn : fns) fn();
  std::vector<std::vector<double>> times(fns.size());
  for (int r = 0; r < repeats; ++r) {
    for (size_t i = 0; i < fns.size(); ++i) {
      const auto start = std::chrono::steady_clock::now();
      fns[i]();
      times[i].push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
  }
  std::vector<double> medians;
  for (const auto& t : times) medians.push_back(median(t));
  return medians;
}

// Median wall time of `fn` over `repeats` runs, after one warm-up run.
inline double median_seconds(int repeats, const std::function<void()>& fn) {
  return median_seconds_in_turns(repeats, {fn}).front();
}

}  // namespace seed::bench
