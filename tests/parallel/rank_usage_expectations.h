// Expectations on the usage figures ranks report (parallel/rank_usage.h),
// shared by the distributed tests.
#pragma once

#include <gtest/gtest.h>

#include <vector>

#include "parallel/rank_usage.h"

namespace seed::parallel::testing {

// One entry per world rank, in rank order; every rank did some work, and a
// worker rank also waited (busy < wall).
inline void expect_usage_of_every_rank(const std::vector<RankUsage>& usage, int world_size) {
  ASSERT_EQ(usage.size(), static_cast<size_t>(world_size)) << "one entry per rank";
  for (size_t rank = 0; rank < usage.size(); ++rank) {
    EXPECT_EQ(usage[rank].rank, static_cast<int>(rank));
    EXPECT_GT(usage[rank].busy_s, 0) << "rank " << rank;
    if (rank > 0) {
      EXPECT_LT(usage[rank].busy_s, usage[rank].wall_s) << "rank " << rank;
    }
  }
}

// A worker rank that was never asked anything slept while it waited: a rank
// spinning in MPI burns a whole core (cpu_s ~ wall_s), a sleeping one wakes
// ~100 times a second.
inline void expect_idle_rank_slept(const WorkerStats& stats, int rank) {
  EXPECT_EQ(stats.requests, 0);
  EXPECT_LT(stats.usage.cpu_s, 0.1 * stats.usage.wall_s)
      << "rank " << rank << ": " << stats.usage.cpu_s << " s of CPU in " << stats.usage.wall_s << " s idle";
}

}  // namespace seed::parallel::testing
