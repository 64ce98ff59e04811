// The MPI communicator on known values, over the whole world and over a
// sub-group of world ranks (how the target group is formed); the session's
// node ranks and the groups it keeps for the process.
#include "parallel/mpi_communicator.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "tests/parallel/mpi_world.h"
#include "tests/throws_error.h"

namespace seed::parallel {
namespace {

using seed::testing::throws_error;
using testing::mpi_world;

class MpiCommunicatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_GE(size_, 2) << "run under mpirun -np 2 or more";
    world_ = make_mpi_communicator(0, size_);
  }
  const int rank_ = mpi_world().world_rank();
  const int size_ = mpi_world().world_size();
  std::unique_ptr<Communicator> world_;
};

TEST_F(MpiCommunicatorTest, WorldGroupHasTheWorldsRanks) {
  EXPECT_EQ(world_->rank(), rank_);
  EXPECT_EQ(world_->size(), size_);
  EXPECT_STREQ(world_->backend(), "mpi");
  world_->barrier();
}

TEST_F(MpiCommunicatorTest, AllReduceSumsEveryRanksValues) {
  at::Tensor t = at::arange(5, at::kFloat) * (rank_ + 1);
  world_->all_reduce_sum(t);
  const double ranks_sum = size_ * (size_ + 1) / 2.0;  // sum of rank + 1
  EXPECT_TRUE(t.equal(at::arange(5, at::kFloat) * ranks_sum)) << t;

  at::Tensor counts = at::full({3}, rank_ + 1, at::kLong);
  world_->all_reduce_sum(counts);
  EXPECT_TRUE(counts.equal(at::full({3}, static_cast<int64_t>(ranks_sum), at::kLong))) << counts;
}

TEST_F(MpiCommunicatorTest, AllGatherConcatenatesInRankOrderAlongAnyDim) {
  const at::Tensor mine = at::arange(6, at::kFloat).view({2, 3}) + 100 * rank_;
  std::vector<at::Tensor> all;
  for (int r = 0; r < size_; ++r) all.push_back(at::arange(6, at::kFloat).view({2, 3}) + 100 * r);
  EXPECT_TRUE(world_->all_gather(mine, 0).equal(at::cat(all, 0)));
  EXPECT_TRUE(world_->all_gather(mine, 1).equal(at::cat(all, 1)));
  EXPECT_TRUE(world_->all_gather(mine, -1).equal(at::cat(all, 1)));
}

TEST_F(MpiCommunicatorTest, BroadcastCopiesTheRootsTensor) {
  const int root = size_ - 1;
  at::Tensor t = at::full({4}, static_cast<float>(rank_), at::kFloat);
  world_->broadcast(t, root);
  EXPECT_TRUE(t.equal(at::full({4}, static_cast<float>(root), at::kFloat))) << t;
}

TEST_F(MpiCommunicatorTest, SubGroupHoldsOnlyItsWorldRanks) {
  // World ranks 1..P-1, as the target group of a run with tp = P - 1.
  std::unique_ptr<Communicator> group = make_mpi_communicator(1, size_ - 1);
  if (rank_ == 0) {
    EXPECT_EQ(group, nullptr);
  } else {
    ASSERT_NE(group, nullptr);
    EXPECT_EQ(group->rank(), rank_ - 1);
    EXPECT_EQ(group->size(), size_ - 1);
    at::Tensor t = at::ones({2}, at::kFloat);
    group->all_reduce_sum(t);
    EXPECT_TRUE(t.equal(at::full({2}, static_cast<float>(size_ - 1), at::kFloat))) << t;
  }
  world_->barrier();
}

TEST_F(MpiCommunicatorTest, ASubGroupIsMadeByItsRanksAlone) {
  // Rank 0 does not take part, as a coordinator does not in the target
  // group's: the group's ranks must not wait for it (a rank outside a group
  // that stops must not keep the group from forming, nor the reverse).
  if (rank_ != 0) {
    std::unique_ptr<Communicator> group = make_mpi_communicator(1, size_ - 1);
    ASSERT_NE(group, nullptr);
    at::Tensor t = at::full({1}, static_cast<float>(rank_), at::kFloat);
    group->all_reduce_sum(t);
    EXPECT_EQ(t.item<float>(), (size_ - 1) * size_ / 2.0f);
  }
  world_->barrier();
}

TEST_F(MpiCommunicatorTest, BadArgumentsNameTheProblem) {
  EXPECT_TRUE(throws_error([&] { make_mpi_communicator(1, size_); }, ErrorKind::kInvalidArgument,
                           {"world ranks [1, " + std::to_string(size_ + 1) + ")",
                            "world of " + std::to_string(size_)}));
  at::Tensor half = at::ones({2}, at::kHalf);
  EXPECT_TRUE(throws_error([&] { world_->all_reduce_sum(half); }, ErrorKind::kInvalidArgument, {"dtype Half"}));
  at::Tensor strided = at::ones({4, 4}, at::kFloat).t().narrow(0, 0, 2);
  EXPECT_TRUE(throws_error([&] { world_->all_reduce_sum(strided); }, ErrorKind::kInvalidArgument, {"contiguous"}));
  at::Tensor t = at::ones({2}, at::kFloat);
  EXPECT_TRUE(throws_error([&] { world_->broadcast(t, size_); }, ErrorKind::kInvalidArgument, {"root"}));
  EXPECT_TRUE(throws_error([&] { world_->all_gather(t, 1); }, ErrorKind::kInvalidArgument, {"dim 1"}));
}

TEST(MpiSession, RanksOfOneMachineAreItsNodeRanksInWorldOrder) {
  EXPECT_EQ(mpi_world().node_rank(), mpi_world().world_rank());  // ctest starts every rank here
}

TEST(MpiSession, AGroupIsMadeOnceAndKeptForTheProcess) {
  MpiSession& session = mpi_world();
  Communicator* pair = session.group(0, 2);
  EXPECT_EQ(session.group(0, 2), pair);
  if (session.world_rank() >= 2) {
    EXPECT_EQ(pair, nullptr);
    return;
  }
  ASSERT_NE(pair, nullptr);
  at::Tensor t = at::full({2}, session.world_rank() + 1, at::kLong);
  pair->all_reduce_sum(t);
  EXPECT_TRUE(t.equal(at::full({2}, 3, at::kLong))) << t;
  // Another range is another group; one of rank 1 alone has only it.
  Communicator* second = session.group(1, 1);
  EXPECT_EQ(second != nullptr, session.world_rank() == 1);
  EXPECT_NE(second, pair);

  int made = 0;
  const auto make = [&] {
    ++made;
    return make_mpi_communicator(0, 2);
  };
  Communicator* kept = session.kept("a pair for this test", make);
  EXPECT_EQ(session.kept("a pair for this test", make), kept);
  EXPECT_EQ(made, 1);
  EXPECT_NE(kept, pair);
}

}  // namespace
}  // namespace seed::parallel
