// The engines' schedules, read from ScheduledEngine::schedule(): FCFS verifies
// proposals in arrival order and finishes more requests than drafters,
// seed-batch verifies every ready proposal once, and the priority policy
// takes the most urgent requests first; an engine keeps none unasked.
#include <gtest/gtest.h>

#include <map>

#include "tests/spec/engine_test_fixture.h"

namespace seed::spec {
namespace {

using ::seed::testing::tokens_of;

TEST_F(EngineTest, FcfsVerifiesProposalsInArrivalOrderAndFinishesMoreRequestsThanDrafters) {
  auto e = scheduled_seed(SchedulePolicy::kFcfs, 2);
  e->record_schedule();
  const std::vector<Completion> out = e->generate(requests(1.0f));
  for (const Completion& c : out) {
    EXPECT_EQ(c.finish, FinishReason::kLength);
    EXPECT_EQ(c.tokens.size(), 20u);
  }
  const std::vector<ScheduleEvent> schedule = e->schedule();
  std::vector<uint64_t> proposed, verified;
  int last_batch = -1;
  for (const ScheduleEvent& event : schedule) {
    if (event.kind == ScheduleEvent::kProposed) {
      proposed.push_back(event.slot);
    } else {
      verified.push_back(event.slot);
      EXPECT_EQ(event.worker, last_batch + 1) << "FCFS verifies one proposal per forward";
      last_batch = event.worker;
    }
  }
  EXPECT_EQ(verified, proposed);
  EXPECT_EQ(static_cast<int64_t>(verified.size()), e->stats().target_forwards);
}

TEST_F(EngineTest, BatchedSeedVerifiesEveryReadyProposalOnceInArrivalOrder) {
  auto e = scheduled_seed(SchedulePolicy::kBatch, 3);
  e->record_schedule();
  e->generate(requests(1.0f));
  std::vector<uint64_t> proposed, verified;
  std::map<int, int> batch_sizes;
  for (const ScheduleEvent& event : e->schedule()) {
    (event.kind == ScheduleEvent::kProposed ? proposed : verified).push_back(event.slot);
    if (event.kind == ScheduleEvent::kVerified) ++batch_sizes[event.worker];
  }
  EXPECT_EQ(verified, proposed);
  EXPECT_EQ(static_cast<int64_t>(batch_sizes.size()), e->stats().target_forwards);
}

// ar-batch under the priority policy: each forward takes the most urgent
// ready requests (two at most), and the tokens are those of any schedule.
TEST_F(EngineTest, PriorityScheduleVerifiesTheMostUrgentRequestsFirst) {
  auto target = std::shared_ptr<models::CausalLM>(models::CausalLM::load(pair_->target));
  auto e = ScheduledEngine::lockstep(std::make_unique<ModelTarget>(target), RunSettings{},
                                     Scheduler(SchedulePolicy::kPriority, 2));
  e->record_schedule();
  std::vector<GenRequest> batch = requests(0.0f, 4);
  for (size_t i = 0; i < batch.size(); ++i) batch[i].priority = i >= 4 ? 1.0 : 0.0;
  const std::vector<Completion> out = e->generate(batch);
  EXPECT_EQ(tokens_of(out), tokens_of(engine("ar")->generate(batch)));
  for (const Completion& c : out) EXPECT_EQ(c.finish, FinishReason::kLength);
  std::map<int, std::vector<uint64_t>> forwards;
  for (const ScheduleEvent& event : e->schedule()) {
    if (event.kind == ScheduleEvent::kVerified) forwards[event.worker].push_back(event.slot);
  }
  ASSERT_EQ(forwards.size(), 12u) << "six requests of four tokens, two per forward";
  for (int f = 0; f < 4; ++f) EXPECT_EQ(forwards[f], std::vector<uint64_t>({4, 5})) << "forward " << f;
}

// A run that does not write its schedule keeps none: two events for every
// proposal would grow without bound over a long run. A reset empties the
// record, which then numbers forwards from 0 again.
TEST_F(EngineTest, SchedulesAreKeptOnlyWhenAskedForAndRestartWithTheStats) {
  auto e = scheduled_seed(SchedulePolicy::kBatch, 2);
  e->generate(requests(0.0f));
  EXPECT_TRUE(e->schedule().empty());
  e->record_schedule();
  e->generate(requests(0.0f));
  ASSERT_FALSE(e->schedule().empty());
  e->reset_stats();
  EXPECT_TRUE(e->schedule().empty());
  e->generate(requests(0.0f));
  int first_forward = -1;
  for (const ScheduleEvent& event : e->schedule()) {
    if (event.kind == ScheduleEvent::kVerified && first_forward < 0) first_forward = event.worker;
  }
  EXPECT_EQ(first_forward, 0);
}

}  // namespace
}  // namespace seed::spec
