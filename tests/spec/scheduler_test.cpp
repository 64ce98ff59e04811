// The Scheduler's policies on scripted queues: what each forward verifies.
#include "spec/engine/scheduler.h"

#include <gtest/gtest.h>

#include "models/base/error.h"

namespace seed::spec {
namespace {

std::vector<ReadyProposal> queued(const std::vector<double>& priorities, int64_t ready_at = 0) {
  std::vector<ReadyProposal> out;
  for (const double p : priorities) out.push_back({p, ready_at});
  return out;
}

TEST(SchedulerTest, FcfsVerifiesTheOldestAlone) {
  Scheduler fcfs(SchedulePolicy::kFcfs, /*max_batch=*/8);
  EXPECT_EQ(fcfs.pick(queued({0.1, 0.9, 0.5})), std::vector<size_t>({0}));
  EXPECT_EQ(fcfs.forwards(), 1);
}

TEST(SchedulerTest, AFullForwardIsOnePerCallerForFcfsAndEveryOneOtherwise) {
  EXPECT_EQ(Scheduler(SchedulePolicy::kFcfs, 16).full_width(/*callers=*/3, /*sequences=*/10), 3u);
  EXPECT_EQ(Scheduler(SchedulePolicy::kFcfs, 2).full_width(3, 10), 2u);
  EXPECT_EQ(Scheduler(SchedulePolicy::kFcfs, 16).full_width(3, 2), 2u);  // a caller with no sequence running
  EXPECT_EQ(Scheduler(SchedulePolicy::kBatch, 16).full_width(3, 10), 10u);
  EXPECT_EQ(Scheduler(SchedulePolicy::kPriority, 8).full_width(3, 10), 8u);
}

TEST(SchedulerTest, BatchVerifiesTheOldestUpToMaxBatch) {
  Scheduler batch(SchedulePolicy::kBatch, /*max_batch=*/2);
  EXPECT_EQ(batch.pick(queued({0.1, 0.9, 0.5})), std::vector<size_t>({0, 1}));
  EXPECT_EQ(batch.pick(queued({0.3})), std::vector<size_t>({0}));
}

TEST(SchedulerTest, PriorityVerifiesTheMostUrgentFirstAndKeepsQueueOrderOnTies) {
  Scheduler priority(SchedulePolicy::kPriority, /*max_batch=*/3);
  EXPECT_EQ(priority.pick(queued({0.1, 0.9, 0.5, 0.9})), std::vector<size_t>({1, 3, 2}));
  Scheduler one(SchedulePolicy::kPriority, /*max_batch=*/1);
  EXPECT_EQ(one.pick(queued({0.2, 0.7})), std::vector<size_t>({1}));
}

// The rule against starvation: a proposal that waited max_wait forwards
// goes before any priority. A low-priority proposal facing a stream of
// urgent ones is verified within max_wait forwards of its arrival.
TEST(SchedulerTest, PriorityNeverStarvesALowPriorityProposal) {
  constexpr int64_t kMaxWait = 4;
  Scheduler scheduler(SchedulePolicy::kPriority, /*max_batch=*/1, kMaxWait);
  std::vector<ReadyProposal> ready = {{0.0, scheduler.forwards()}};  // the low one, index 0
  int64_t served_at = -1;
  for (int64_t forward = 0; forward < 20 && served_at < 0; ++forward) {
    ready.push_back({1.0, scheduler.forwards()});  // a fresh urgent proposal every forward
    const std::vector<size_t> picked = scheduler.pick(ready);
    ASSERT_EQ(picked.size(), 1u);
    if (ready[picked[0]].priority == 0.0) served_at = forward;
    ready.erase(ready.begin() + static_cast<std::ptrdiff_t>(picked[0]));
  }
  EXPECT_EQ(served_at, kMaxWait);
}

// Callers take turns, the one with the oldest proposal first; priorities
// compare within a caller only.
TEST(SchedulerTest, CallersTakeTurnsOldestFirstAndPrioritiesRankWithinACaller) {
  std::vector<ReadyProposal> ready;
  for (int i = 0; i < 40; ++i) ready.push_back({0.0, 0, /*caller=*/7});  // a wide level, queued first
  ready.push_back({0.0, 1, /*caller=*/9});                             // one request of another caller
  Scheduler batch(SchedulePolicy::kBatch, /*max_batch=*/4);
  EXPECT_EQ(batch.pick(ready), std::vector<size_t>({0, 40, 1, 2}));
  // fcfs: the oldest of each caller, one each.
  Scheduler fcfs(SchedulePolicy::kFcfs, /*max_batch=*/4);
  EXPECT_EQ(fcfs.pick(ready), std::vector<size_t>({0, 40}));
  Scheduler fcfs_one(SchedulePolicy::kFcfs, /*max_batch=*/1);
  EXPECT_EQ(fcfs_one.pick(ready), std::vector<size_t>({0}));

  // Caller 1's urgent proposal does not outrank caller 2's older one.
  const std::vector<ReadyProposal> mixed = {{0.1, 0, 2}, {0.9, 0, 1}, {0.5, 0, 2}, {0.3, 0, 1}};
  Scheduler priority(SchedulePolicy::kPriority, /*max_batch=*/3);
  EXPECT_EQ(priority.pick(mixed), std::vector<size_t>({2, 1, 0}));
}

TEST(SchedulerTest, PolicyNamesRoundTripAndUnknownOnesAreErrors) {
  for (const SchedulePolicy p : {SchedulePolicy::kFcfs, SchedulePolicy::kBatch, SchedulePolicy::kPriority}) {
    EXPECT_EQ(parse_schedule_policy(schedule_policy_name(p)), p);
  }
  try {
    parse_schedule_policy("lifo");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--schedule"), std::string::npos) << e.what();
  }
  EXPECT_THROW(Scheduler(SchedulePolicy::kBatch, 0), Error);
}

}  // namespace
}  // namespace seed::spec
