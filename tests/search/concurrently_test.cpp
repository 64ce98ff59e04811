// The threads that solve several problems at once.
#include "search/concurrently.h"

#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <string>

namespace seed::search {
namespace {

TEST(ConcurrentlyTest, RunsEveryJobOnce) {
  for (const int threads : {1, 3, 8}) {
    std::atomic<int> sum{0};
    std::atomic<int> ran{0};
    run_concurrently(100, threads, [&](size_t i) {
      sum += static_cast<int>(i);
      ++ran;
    });
    EXPECT_EQ(ran, 100) << threads;
    EXPECT_EQ(sum, 4950) << threads;
  }
}

TEST(ConcurrentlyTest, RethrowsAFailureAfterTheRunningJobsFinish) {
  for (const int threads : {1, 3, 8}) {
    std::atomic<int> started{0};
    std::atomic<int> finished{0};
    try {
      run_concurrently(100, threads, [&](size_t i) {
        ++started;
        if (i == 5) {
          ++finished;
          throw std::runtime_error("job 5");
        }
        ++finished;
      });
      ADD_FAILURE() << "no exception with " << threads << " threads";
    } catch (const std::runtime_error& e) {
      EXPECT_EQ(std::string(e.what()), "job 5");
    }
    EXPECT_EQ(started, finished) << "a job was still running when the failure was rethrown";
  }
}

// A thread that catches a failure takes no further index, so when every job
// fails each thread runs at most one: how many run does not depend on timing.
TEST(ConcurrentlyTest, AFailureStopsHandingOutJobs) {
  for (const int threads : {1, 3, 8}) {
    std::atomic<int> ran{0};
    EXPECT_THROW(run_concurrently(100, threads,
                                  [&](size_t) {
                                    ++ran;
                                    throw std::runtime_error("fails");
                                  }),
                 std::runtime_error);
    EXPECT_GE(ran, 1);
    EXPECT_LE(ran, threads) << "jobs kept being handed out after a failure";
  }
}

}  // namespace
}  // namespace seed::search
