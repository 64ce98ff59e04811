// The lookahead speedup model against test vectors worked from its formulas
// (Fu et al. 2025, Lookahead Reasoning, sec. 3.2-3.3 and appendix B.1).
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "spec/lookahead/lookahead_theory.h"
#include "tests/throws_error.h"

namespace seed::spec {
namespace {

TEST(LookaheadTheory, SyncAndTokenSpeedupsMatchTheNotes) {
  const std::vector<double> expected = {1, 1.3333, 1.4, 1.36, 1.2809, 1.1917, 1.1046, 1.0242};
  for (int k = 1; k <= 8; ++k) {
    EXPECT_NEAR(sync_step_speedup(k, 0.6, 0.2), expected[k - 1], 1e-4) << "k = " << k;
    EXPECT_NEAR(token_speedup(k, 0.6, 0.2), expected[k - 1], 1e-4) << "k = " << k;
  }
}

TEST(LookaheadTheory, AsyncSpeedupRisesToTheDraftBoundThenStays) {
  const std::vector<double> a06 = {1, 1.5267, 1.7728, 1.88, 1.9231, 1.9231, 1.9231, 1.9231};
  for (int k = 1; k <= 8; ++k) EXPECT_NEAR(async_step_speedup(k, 0.6, 0.2), a06[k - 1], 1e-4) << "k = " << k;
  const std::vector<double> a05 = {1, 1.4634, 1.6667, 1.7544, 1.7919, 1.8077, 1.8143, 1.8169};
  for (int k = 1; k <= 8; ++k) EXPECT_NEAR(async_step_speedup(k, 0.5, 0.1), a05[k - 1], 1e-4) << "k = " << k;
  EXPECT_NEAR(async_step_speedup(10, 0.5, 0.1), 1.8182, 1e-4);  // S1, from ceil(1 / c) = 10 on
  EXPECT_NEAR(async_step_speedup(50, 0.5, 0.1), 1.8182, 1e-4);
}

TEST(LookaheadTheory, TheBudgetSplitMatchesTheNotes) {
  const LookaheadPlan async16 = best_lookahead_plan(16, true, 0.6, 0.2, 0.7, 0.1);
  EXPECT_EQ(async16.k1, 4);
  EXPECT_EQ(async16.k2, 4);
  EXPECT_NEAR(async16.speedup, 3.6631, 1e-4);
  const LookaheadPlan sync16 = best_lookahead_plan(16, false, 0.6, 0.2, 0.7, 0.1);
  EXPECT_EQ(sync16.k1, 3);
  EXPECT_EQ(sync16.k2, 5);
  EXPECT_NEAR(sync16.speedup, 2.7731, 1e-4);
  const LookaheadPlan async8 = best_lookahead_plan(8, true, 0.6, 0.2, 0.7, 0.1);
  EXPECT_EQ(async8.k1, 2);
  EXPECT_EQ(async8.k2, 4);
  EXPECT_NEAR(async8.speedup, 2.9748, 1e-4);
  // Token speculation alone (k1 = 1) is the best at budget 16 only up to 1.9808.
  double token_only = 0;
  for (int k2 = 1; k2 <= 16; ++k2) token_only = std::max(token_only, token_speedup(k2, 0.7, 0.1));
  EXPECT_NEAR(token_only, 1.9808, 1e-4);
}

TEST(LookaheadTheory, FullAcceptanceIsTheLimitAndBadInputIsAnError) {
  EXPECT_NEAR(token_speedup(4, 1.0, 0.1), 4 / (1 - 0.1 + 0.4), 1e-6);
  EXPECT_NEAR(async_step_speedup(20, 1.0, 0.25), 4.0, 1e-6);
  using seed::testing::throws_error;
  EXPECT_TRUE(throws_error([] { token_speedup(0, 0.5, 0.1); }, ErrorKind::kInvalidArgument, {"parallel dimension"}));
  EXPECT_TRUE(throws_error([] { sync_step_speedup(2, 1.5, 0.1); }, ErrorKind::kInvalidArgument, {"acceptance"}));
  EXPECT_TRUE(throws_error([] { async_step_speedup(2, 0.5, 0.0); }, ErrorKind::kInvalidArgument, {"cost ratio"}));
  EXPECT_TRUE(throws_error([] { best_lookahead_plan(0, true, 0.5, 0.1, 0.5, 0.1); }, ErrorKind::kInvalidArgument,
                           {"budget"}));
}

}  // namespace
}  // namespace seed::spec
