// The token-level speedup model against test vectors worked from its formula
// (Fu et al. 2025, Lookahead Reasoning, sec. 3.2 and appendix B.1).
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "spec/lookahead/lookahead_theory.h"
#include "tests/throws_error.h"

namespace seed::spec {
namespace {

TEST(LookaheadTheory, TokenSpeedupMatchesTheNotes) {
  const std::vector<double> expected = {1, 1.3333, 1.4, 1.36, 1.2809, 1.1917, 1.1046, 1.0242};
  for (int k = 1; k <= 8; ++k) EXPECT_NEAR(token_speedup(k, 0.6, 0.2), expected[k - 1], 1e-4) << "k = " << k;
  // At alpha 0.7 and c 0.1 the best draft length is 4 (k = 5), at 1.9808.
  double best = 0;
  int best_k = 0;
  for (int k = 1; k <= 16; ++k) {
    if (token_speedup(k, 0.7, 0.1) > best) best = token_speedup(k, 0.7, 0.1), best_k = k;
  }
  EXPECT_NEAR(best, 1.9808, 1e-4);
  EXPECT_EQ(best_k, 5);
}

TEST(LookaheadTheory, FullAcceptanceIsTheLimitAndBadInputIsAnError) {
  EXPECT_NEAR(token_speedup(4, 1.0, 0.1), 4 / (1 - 0.1 + 0.4), 1e-6);
  using seed::testing::throws_error;
  EXPECT_TRUE(throws_error([] { token_speedup(0, 0.5, 0.1); }, ErrorKind::kInvalidArgument, {"parallel dimension"}));
  EXPECT_TRUE(throws_error([] { token_speedup(2, 1.5, 0.1); }, ErrorKind::kInvalidArgument, {"acceptance"}));
  EXPECT_TRUE(throws_error([] { token_speedup(2, 0.5, 0.0); }, ErrorKind::kInvalidArgument, {"cost ratio"}));
}

}  // namespace
}  // namespace seed::spec
