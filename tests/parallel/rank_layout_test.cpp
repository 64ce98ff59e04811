// Which rank plays which role under mpirun, the layouts refused, and which
// GPU of its node a rank computes on.
#include "parallel/rank_layout.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/throws_error.h"

namespace seed::parallel {
namespace {

using ::seed::testing::throws_error;

TEST(RankLayout, RankZeroCoordinatesTheTargetGroupFollowsTheRestDraft) {
  const RankLayout layout = RankLayout::make(5, 2);
  EXPECT_EQ(layout.role(0), RankRole::kCoordinator);
  EXPECT_EQ(layout.role(1), RankRole::kTarget);
  EXPECT_EQ(layout.role(2), RankRole::kTarget);
  EXPECT_EQ(layout.role(3), RankRole::kDraft);
  EXPECT_EQ(layout.target_ranks(), (std::vector<int>{1, 2}));
  EXPECT_EQ(layout.draft_ranks(), (std::vector<int>{3, 4}));
  EXPECT_NE(layout.summary().find("target group ranks 1..2 (tp 2)"), std::string::npos) << layout.summary();
  EXPECT_NE(layout.summary().find("draft workers ranks 3..4"), std::string::npos) << layout.summary();
}

TEST(RankLayout, WithoutTpTheTargetStaysOnTheCoordinator) {
  const RankLayout layout = RankLayout::make(3, 0);
  EXPECT_TRUE(layout.target_ranks().empty());
  EXPECT_EQ(layout.draft_ranks(), (std::vector<int>{1, 2}));
  EXPECT_NE(layout.summary().find("target group on the coordinator"), std::string::npos) << layout.summary();
  const RankLayout single = RankLayout::make(1, 0);
  EXPECT_FALSE(single.distributed());
  EXPECT_TRUE(single.draft_ranks().empty());
}

TEST(RankLayout, RefusesATargetGroupLargerThanTheRanks) {
  EXPECT_TRUE(throws_error([] { RankLayout::make(2, 2); }, ErrorKind::kInvalidArgument, {"--tp 2", "3 ranks", "-np"}));
  EXPECT_TRUE(throws_error([] { RankLayout::make(3, -1); }, ErrorKind::kInvalidArgument, {"--tp -1"}));
  EXPECT_TRUE(throws_error([] { RankLayout::make(0, 0); }, ErrorKind::kInvalidArgument, {"world size 0"}));
}

TEST(RankDevice, CudaWithoutAnIndexIsTheNodesGpuOfTheRankInTurn) {
  // The first node of 1 coordinator + an 8-rank target group on 8 GPUs:
  // each target rank has a GPU of its own; the coordinator shares GPU 0.
  std::vector<std::string> first_node;
  for (int node_rank = 0; node_rank < 9; ++node_rank) first_node.push_back(rank_device("cuda", node_rank, 8));
  EXPECT_EQ(first_node, (std::vector<std::string>{"cuda:0", "cuda:1", "cuda:2", "cuda:3", "cuda:4", "cuda:5",
                                                   "cuda:6", "cuda:7", "cuda:0"}));
  // One GPU a rank, as a launcher that sets CUDA_VISIBLE_DEVICES per rank leaves it.
  EXPECT_EQ(rank_device("cuda", 5, 1), "cuda:0");
}

TEST(RankDevice, AnExplicitDeviceTheCpuAndNoGpuSeenStayAsGiven) {
  EXPECT_EQ(rank_device("cuda:3", 1, 8), "cuda:3");
  EXPECT_EQ(rank_device("cpu", 2, 8), "cpu");
  EXPECT_EQ(rank_device("cuda", 2, 0), "cuda");
}

}  // namespace
}  // namespace seed::parallel
