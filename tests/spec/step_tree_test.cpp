// StepTree: alternatives kept once, what is still to be asked for, and what
// a commit keeps.
#include <gtest/gtest.h>

#include "spec/lookahead/step_tree.h"

namespace seed::spec {
namespace {

Completion step(std::vector<int32_t> tokens, FinishReason finish = FinishReason::kStop) {
  Completion c;
  c.tokens = std::move(tokens);
  c.finish = finish;
  return c;
}

TEST(StepTreeTest, IdenticalAlternativesAreKeptOnceAndPathsAppendTheirSteps) {
  StepTree tree({7});
  const StepTree::Id root = tree.root();
  tree.add_child(root, step({1, 2}));
  tree.add_child(root, step({1, 2}));
  tree.add_child(root, step({1, 2}, FinishReason::kLength));  // cut short: another step
  tree.add_child(root, step({3}));
  ASSERT_EQ(tree.children(root).size(), 3u);
  EXPECT_EQ(tree.path(tree.children(root)[0]), (std::vector<int32_t>{7, 1, 2}));
  EXPECT_EQ(tree.depth(tree.children(root)[2]), 1);
}

TEST(StepTreeTest, OnlyStepsEndedAtTheDelimiterAreContinuedWithinTheDepth) {
  StepTree tree({});
  const StepTree::Id root = tree.root();
  EXPECT_EQ(tree.to_expand(1), std::vector<StepTree::Id>{root});
  EXPECT_TRUE(tree.to_expand(0).empty());
  tree.mark_expanding(root);
  EXPECT_TRUE(tree.to_expand(1).empty());
  tree.add_child(root, step({1}));
  tree.add_child(root, step({2}, FinishReason::kEos));
  tree.mark_expanded(root);
  EXPECT_TRUE(tree.expanded(root));
  const StepTree::Id open = tree.children(root)[0];
  EXPECT_TRUE(tree.to_expand(1).empty());  // depth 1 is the limit
  EXPECT_EQ(tree.to_expand(2), std::vector<StepTree::Id>{open});
  EXPECT_EQ(tree.to_verify(), (std::vector<StepTree::Id>{root, open}));
  tree.mark_verifying(root);
  tree.set_target(open, step({5}));
  EXPECT_TRUE(tree.to_verify().empty());
  ASSERT_TRUE(tree.target(open));
  EXPECT_FALSE(tree.target(root));
}

TEST(StepTreeTest, CommittingADraftKeepsItsSubtreeAndRestartingKeepsNothing) {
  StepTree tree({});
  const StepTree::Id root = tree.root();
  tree.add_child(root, step({1}));
  tree.add_child(root, step({2}));
  const StepTree::Id kept = tree.children(root)[0];
  const StepTree::Id dropped = tree.children(root)[1];
  tree.add_child(kept, step({3}));
  tree.add_child(dropped, step({4}));
  const StepTree::Id grandchild = tree.children(kept)[0];
  const StepTree::Id dropped_grandchild = tree.children(dropped)[0];
  tree.advance_to(kept);
  EXPECT_EQ(tree.root(), kept);
  EXPECT_EQ(tree.depth(kept), 0);
  EXPECT_EQ(tree.depth(grandchild), 1);
  EXPECT_TRUE(tree.contains(grandchild));
  EXPECT_FALSE(tree.contains(root));
  EXPECT_FALSE(tree.contains(dropped));
  EXPECT_FALSE(tree.contains(dropped_grandchild));
  tree.restart({1, 9});
  EXPECT_FALSE(tree.contains(kept));
  EXPECT_FALSE(tree.contains(grandchild));
  // Ids are never reused: an answer for a dropped node finds nothing.
  EXPECT_GT(tree.root(), dropped_grandchild);
  EXPECT_EQ(tree.path(tree.root()), (std::vector<int32_t>{1, 9}));
  EXPECT_EQ(tree.depth(tree.root()), 0);
  EXPECT_TRUE(tree.children(tree.root()).empty());
}

}  // namespace
}  // namespace seed::spec
