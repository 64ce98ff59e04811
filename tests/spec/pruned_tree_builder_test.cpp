// PrunedTreeBuilder on hand-made draft distributions: which nodes expand,
// which are pruned, and the bound on expandable nodes per level.
#include "spec/drafters/model/pruned_tree_builder.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "tests/throws_error.h"

namespace seed::spec {
namespace {

using ::seed::testing::throws_error;

TEST(PrunedTreeBuilder, ExpandsAtTheThresholdAndPrunesBelowEpsilon) {
  PrunedTreeBuilder b(PrunedTree{0.2f, 0.05f});
  // Tokens by probability: 2 (0.5), 0 (0.3), 4 (0.1), 1 (0.06), 3 (0.04); 5 has none.
  const std::vector<float> root = {0.3f, 0.06f, 0.5f, 0.04f, 0.1f, 0.0f};
  ASSERT_EQ(b.add_children(-1, root.data(), 6, 5, true), 2) << "0.5 and 0.3 reach 0.2";
  ASSERT_EQ(b.size(), 5) << "zeros are never children";
  EXPECT_EQ(b.token(0), 2);
  EXPECT_EQ(b.token(1), 0);
  EXPECT_EQ(b.token(4), 3);
  // Node 0 (0.5): its children at 0.5 * q.
  const std::vector<float> below_first = {0.0f, 0.8f, 0.0f, 0.15f, 0.05f, 0.0f};
  ASSERT_EQ(b.add_children(0, below_first.data(), 6, 2, true), 1) << "0.4 expands, 0.075 not";
  EXPECT_FLOAT_EQ(b.confidence(5), 0.4f);
  EXPECT_FLOAT_EQ(b.confidence(6), 0.075f);
  // Node 1 (0.3): children 0.3 * 0.5 = 0.15 and 0.3 * 0.1 = 0.03.
  const std::vector<float> below_second = {0.5f, 0.4f, 0.1f, 0.0f, 0.0f, 0.0f};
  ASSERT_EQ(b.add_children(1, below_second.data(), 6, 5, false), 0) << "the deepest level never expands";
  // Node 5 (0.4): one child at the last level.
  const std::vector<float> below_deep = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 1.0f};
  ASSERT_EQ(b.add_children(5, below_deep.data(), 6, 5, false), 0);

  std::vector<int32_t> renumbered;
  const DraftTree tree = b.finish(&renumbered);
  EXPECT_TRUE(tree.deterministic);
  EXPECT_TRUE(tree.q.empty());
  // Dropped below 0.05: node 4 (0.04), node 9 (0.3 * 0.1 = 0.03).
  EXPECT_EQ(tree.tokens, (std::vector<int32_t>{2, 0, 4, 1, 1, 3, 0, 1, 5}));
  EXPECT_EQ(tree.parents, (std::vector<int32_t>{-1, -1, -1, -1, 0, 0, 1, 1, 4}));
  EXPECT_EQ(renumbered, (std::vector<int32_t>{0, 1, 2, 3, -1, 4, 5, 6, 7, -1, 8}));
}

TEST(PrunedTreeBuilder, APruningThresholdAboveTheExpansionOneStopsExpansionToo) {
  // A node below epsilon would be dropped with all its children: never expand it.
  PrunedTreeBuilder b(PrunedTree{0.01f, 0.3f});
  const std::vector<float> q = {0.6f, 0.25f, 0.15f};
  EXPECT_EQ(b.add_children(-1, q.data(), 3, 3, true), 1);
  EXPECT_EQ(b.finish().tokens, std::vector<int32_t>{0});
}

TEST(PrunedTreeBuilder, TiesGoToTheLowerIdAndKBoundsTheChildren) {
  PrunedTreeBuilder b(PrunedTree{0.1f, 0.0f});
  const std::vector<float> q = {0.25f, 0.25f, 0.25f, 0.25f};
  EXPECT_EQ(b.add_children(-1, q.data(), 4, 3, true), 3);
  EXPECT_EQ(b.finish().tokens, (std::vector<int32_t>{0, 1, 2}));
}

// Path confidences of one level sum to at most 1, so at most floor(1 / r)
// of its nodes reach r; checked on random distributions, every node that
// may expand expanding.
TEST(PrunedTreeBuilder, ALevelHoldsAtMostOneOverRExpandableNodes) {
  std::mt19937 rng(7);
  std::exponential_distribution<float> gamma_one(1.0f);
  constexpr int64_t kVocab = 40;
  for (const float r : {0.036f, 0.1f, 0.25f}) {
    for (int trial = 0; trial < 20; ++trial) {
      PrunedTreeBuilder b(PrunedTree{r, 0.01f});
      std::vector<int32_t> frontier = {-1};
      for (int depth = 0; depth < 8 && !frontier.empty(); ++depth) {
        std::vector<int32_t> next;
        double level_mass = 0;
        for (const int32_t node : frontier) {
          // A peaked random distribution (Dirichlet with small alpha).
          std::vector<float> q(kVocab);
          float total = 0;
          for (float& x : q) total += (x = std::pow(gamma_one(rng), 4.0f));
          for (float& x : q) x /= total;
          const int32_t first = b.size();
          const int expanding = b.add_children(node, q.data(), kVocab, 5, true);
          for (int32_t c = first; c < b.size(); ++c) level_mass += b.confidence(c);
          for (int c = 0; c < expanding; ++c) {
            EXPECT_GE(b.confidence(first + c), r);
            next.push_back(first + c);
          }
          for (int32_t c = first + expanding; c < b.size(); ++c) EXPECT_LT(b.confidence(c), r);
        }
        EXPECT_LE(level_mass, 1.0 + 1e-5);
        EXPECT_LE(static_cast<double>(next.size()), std::floor(1.0 / r)) << "r " << r << " depth " << depth;
        frontier = std::move(next);
      }
      for (const int32_t parent : b.finish().parents) EXPECT_LT(parent, b.size());
    }
  }
}

TEST(PrunedTreeBuilder, MisuseIsAnErrorNamingTheProblem) {
  EXPECT_TRUE(throws_error([] { PrunedTreeBuilder(PrunedTree{0.0f, 0.01f}); }, ErrorKind::kInvalidArgument,
                           {"expansion threshold"}));
  EXPECT_TRUE(throws_error([] { PrunedTreeBuilder(PrunedTree{0.1f, 1.5f}); }, ErrorKind::kInvalidArgument,
                           {"pruning threshold"}));
  PrunedTreeBuilder b(PrunedTree{});
  const std::vector<float> q = {0.9f, 0.1f};
  EXPECT_TRUE(throws_error([&] { b.add_children(3, q.data(), 2, 2, true); }, ErrorKind::kInvalidArgument, {"no node 3"}));
  b.add_children(-1, q.data(), 2, 2, true);
  b.add_children(0, q.data(), 2, 2, true);
  EXPECT_TRUE(throws_error([&] { b.add_children(0, q.data(), 2, 2, true); }, ErrorKind::kInvalidArgument,
                           {"node 0 already has children"}));
}

}  // namespace
}  // namespace seed::spec
