// The threads that solve several problems at once.
#include "search/concurrently.h"

#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>

namespace seed::search {
namespace {

TEST(ConcurrentlyTest, RunsEveryJobOnceAndRethrowsTheFirstFailure) {
  for (const int threads : {1, 3, 8}) {
    std::atomic<int> sum{0};
    run_concurrently(100, threads, [&](size_t i) { sum += static_cast<int>(i); });
    EXPECT_EQ(sum, 4950) << threads;
    std::atomic<int> ran{0};
    EXPECT_THROW(run_concurrently(100, threads,
                                  [&](size_t i) {
                                    ++ran;
                                    if (i == 5) throw std::runtime_error("job 5");
                                  }),
                 std::runtime_error);
    EXPECT_LT(ran, 100) << "jobs kept being handed out after a failure";
  }
}

}  // namespace
}  // namespace seed::search
