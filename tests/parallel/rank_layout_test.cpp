// Which rank plays which role under mpirun, and the layouts refused.
#include "parallel/rank_layout.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace seed::parallel
