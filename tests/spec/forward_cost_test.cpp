// ForwardCost: the line through what target forwards cost by the drafted
// tokens they verify.
#include "spec/engine/forward_cost.h"

#include <gtest/gtest.h>

namespace seed::spec {
namespace {

TEST(ForwardCost, FitsTheLineThroughCallsThatVerifiedDifferentDraftLengths) {
  ForwardCost cost;
  // 1 ms a forward plus 0.1 ms a drafted token, at 3, 7 and 15 tokens.
  for (const int drafted : {3, 7, 15}) cost.add(10, 10 * drafted, 10 * (1e-3 + 1e-4 * drafted));
  EXPECT_NEAR(cost.base_s(), 1e-3, 1e-9);
  EXPECT_NEAR(cost.per_token_s(), 1e-4, 1e-9);
  EXPECT_NEAR(cost.verify_token_ratio(), 0.1, 1e-6);
}

TEST(ForwardCost, WithoutSpreadOrWithAFallingLineAForwardCostsItsMean) {
  ForwardCost cost;
  EXPECT_TRUE(cost.empty());
  cost.add(4, 28, 4 * 2e-3);
  cost.add(6, 42, 6 * 4e-3);  // the same 7 tokens a forward: no slope to see
  EXPECT_FALSE(cost.empty());
  EXPECT_EQ(cost.per_token_s(), 0);
  EXPECT_EQ(cost.verify_token_ratio(), 0);
  EXPECT_NEAR(cost.base_s(), 3.2e-3, 1e-12);
  ForwardCost falling;
  falling.add(10, 10, 10 * 5e-3);
  falling.add(10, 100, 10 * 1e-3);
  EXPECT_EQ(falling.per_token_s(), 0);
  EXPECT_NEAR(falling.base_s(), 3e-3, 1e-12);
  ForwardCost none;
  none.add(0, 0, 1.0);  // a call without forwards (all prefix-cached, say) adds nothing
  EXPECT_TRUE(none.empty());
}

TEST(ForwardCost, ASlopeNeverMakesAnEmptyForwardFree) {
  ForwardCost cost;
  // Nearly proportional: the intercept would come out at or below 0.
  cost.add(10, 10, 10 * 1e-4);
  cost.add(10, 160, 10 * 1.6e-3);
  EXPECT_GT(cost.base_s(), 0);
  EXPECT_GT(cost.per_token_s(), 0);
}

}  // namespace
}  // namespace seed::spec
