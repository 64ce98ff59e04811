// How many problems `seed run` keeps in flight (a pure rule).
#include "launch/concurrency.h"

#include <gtest/gtest.h>

namespace seed::launch {
namespace {

// requested, engine shares, engine batches, gpu, cores, max_batch, requests per step, problems left.
ConcurrencyRequest request(int requested, bool shares, bool batches, bool gpu, int cores, int per_step,
                           size_t problems) {
  return ConcurrencyRequest{requested, shares, batches, gpu, cores, 16, per_step, problems};
}

TEST(ConcurrencyTest, AutoFillsAForwardWithinTheDevicesCap) {
  struct Row {
    ConcurrencyRequest request;
    int expected;
  };
  const Row rows[] = {
      {request(0, true, true, false, 2, 1, 100), 8},    // cot on two cores: 4 per core
      {request(0, true, true, false, 2, 25, 100), 1},   // bfs 5 x 5 on two cores: a level fills a forward
      {request(0, true, true, true, 2, 25, 100), 2},    // on a GPU: two levels fill 32 rows
      {request(0, true, true, false, 2, 4, 10), 4},     // mcts parallel 4: four fill 16 rows
      {request(0, true, true, true, 2, 1, 100), 32},    // cot on a GPU: 2 x max_batch
      {request(0, true, true, true, 2, 1, 5), 5},       // never more than the problems left
      {request(0, true, true, true, 2, 64, 100), 2},    // GPU, a step wider than a forward: stragglers beside a level
      {request(0, true, true, false, 2, 64, 100), 1},   // CPU, a step wider than a forward
      {request(0, true, true, false, 2, 64, 1), 1},     // one problem left
      {request(0, true, false, false, 8, 1, 100), 1},   // ar, sd, mcsd: one request at a time
      {request(0, false, true, false, 8, 1, 100), 1},   // an engine that serves one call
      {request(3, true, true, false, 2, 25, 100), 3},   // explicit
      {request(8, true, true, false, 2, 25, 4), 4},     // explicit, capped by the problems
  };
  for (const Row& row : rows) {
    const ConcurrencyPlan plan = plan_concurrency(row.request);
    EXPECT_EQ(plan.problems_in_flight, row.expected) << plan.describe();
    EXPECT_FALSE(plan.reason.empty());
  }
}

// The log line counts in the singular where a count is one.
TEST(ConcurrencyTest, TheReasonCountsInTheSingularForOne) {
  ConcurrencyRequest one = request(0, true, true, false, 1, 1, 1);
  one.max_batch = 1;
  const ConcurrencyPlan plan = plan_concurrency(one);
  EXPECT_EQ(plan.describe(), "1 problem in flight (auto: 1 request per step, a forward full at 1 row, at most 4 on 1 "
                             "CPU core)");
  const ConcurrencyPlan many = plan_concurrency(request(0, true, true, false, 2, 25, 100));
  EXPECT_EQ(many.reason, "auto: 25 requests per step, a forward full at 16 rows, at most 8 on 2 CPU cores");
}

}  // namespace
}  // namespace seed::launch
