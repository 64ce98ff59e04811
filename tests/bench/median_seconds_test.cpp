// Benchmark timings compared with each other run in turns: each call once
// a turn, after one warm-up of each.
#include "bench/median_seconds.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace seed::bench {
namespace {

TEST(MedianSeconds, CallsComparedWithEachOtherRunInTurnsAfterAWarmUpEach) {
  std::string calls;
  const std::vector<double> seconds =
      median_seconds_in_turns(3, {[&] { calls += 'a'; }, [&] { calls += 'b'; }, [&] { calls += 'c'; }});
  EXPECT_EQ(calls, "abc" "abc" "abc" "abc");
  EXPECT_EQ(seconds.size(), 3u);
}

}  // namespace
}  // namespace seed::bench
