// Blocksworld: actions and their restrictions, optimal plans (valid, optimal
// and the breadth-first search's own),
// PlanBench text, random instances and the plan validator.
#include "tasks/blocksworld.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <map>
#include <set>

#include "models/base/error.h"

namespace seed::tasks {
namespace {

constexpr int kRed = 0;
constexpr int kBlue = 1;
constexpr int kYellow = 2;

// red on blue; blue and yellow on the table. Goal: blue on red.
BlocksInstance small_instance() {
  BlocksInstance instance;
  instance.names = {"red", "blue", "yellow"};
  instance.start.below = {kBlue, kOnTable, kOnTable};
  instance.goal = {{kBlue, kRed}};
  return instance;
}

// The Sussman anomaly: yellow on red; goal red on blue on yellow.
BlocksInstance sussman_instance() {
  BlocksInstance instance;
  instance.names = {"red", "blue", "yellow"};
  instance.start.below = {kOnTable, kOnTable, kRed};
  instance.goal = {{kRed, kBlue}, {kBlue, kYellow}};
  return instance;
}

// True iff some plan of at most `depth` actions reaches the goal (plain
// depth-first enumeration, independent of the BFS under test).
bool reachable_within(const BlocksState& state, const std::vector<OnFact>& goal, int depth) {
  if (blocks_goal_holds(state, goal)) return true;
  if (depth == 0) return false;
  for (const BlocksAction& a : blocks_valid_actions(state)) {
    if (reachable_within(blocks_apply(state, a), goal, depth - 1)) return true;
  }
  return false;
}

// The plan of a plain breadth-first search expanding actions in
// blocks_valid_actions order: the reference blocks_optimal_plan must equal.
std::optional<std::vector<BlocksAction>> bfs_plan(const BlocksState& start,
                                                  const std::vector<OnFact>& goal) {
  std::map<std::vector<int>, std::pair<std::vector<int>, BlocksAction>> parent;
  std::deque<BlocksState> frontier{start};
  parent.emplace(start.below, std::make_pair(start.below, BlocksAction{}));
  while (!frontier.empty()) {
    const BlocksState state = frontier.front();
    frontier.pop_front();
    if (blocks_goal_holds(state, goal)) {
      std::vector<BlocksAction> plan;
      for (std::vector<int> at = state.below; at != start.below; at = parent.at(at).first) {
        plan.insert(plan.begin(), parent.at(at).second);
      }
      return plan;
    }
    for (const BlocksAction& a : blocks_valid_actions(state)) {
      const BlocksState next = blocks_apply(state, a);
      if (parent.emplace(next.below, std::make_pair(state.below, a)).second) frontier.push_back(next);
    }
  }
  return std::nullopt;
}

std::string plan_text(const std::vector<BlocksAction>& plan, const std::vector<std::string>& names) {
  std::string text;
  for (const BlocksAction& a : plan) text += blocks_action_text(a, names) + "\n";
  return text;
}

void expect_valid_and_optimal(const BlocksInstance& instance) {
  const std::optional<std::vector<BlocksAction>> plan =
      blocks_optimal_plan(instance.start, instance.goal);
  ASSERT_TRUE(plan.has_value());
  const PlanCheck check = blocks_validate_plan(instance, plan_text(*plan, instance.names));
  EXPECT_TRUE(check.reaches_goal()) << check.reason;
  EXPECT_EQ(check.num_actions, static_cast<int>(plan->size()));
  EXPECT_FALSE(reachable_within(instance.start, instance.goal, static_cast<int>(plan->size()) - 1))
      << "a shorter plan exists than the BFS plan of " << plan->size();
}

TEST(BlocksworldTest, ValidActionsFollowTheRestrictions) {
  const BlocksState start = small_instance().start;
  const std::vector<BlocksAction> empty_hand = blocks_valid_actions(start);
  ASSERT_EQ(empty_hand.size(), 2u);
  EXPECT_EQ(empty_hand[0], (BlocksAction{BlocksActionKind::kUnstack, kRed, kBlue}));
  EXPECT_EQ(empty_hand[1], (BlocksAction{BlocksActionKind::kPickUp, kYellow, -1}));
  const BlocksState holding = blocks_apply(start, empty_hand[1]);
  EXPECT_EQ(holding.held(), kYellow);
  EXPECT_FALSE(holding.clear(kYellow));
  const std::vector<BlocksAction> held = blocks_valid_actions(holding);
  ASSERT_EQ(held.size(), 2u);
  EXPECT_EQ(held[0], (BlocksAction{BlocksActionKind::kPutDown, kYellow, -1}));
  EXPECT_EQ(held[1], (BlocksAction{BlocksActionKind::kStack, kYellow, kRed}));
}

TEST(BlocksworldTest, IllegalActionsNameTheRestrictionAndApplyThrows) {
  const BlocksState start = small_instance().start;
  EXPECT_NE(blocks_action_error(start, {BlocksActionKind::kPickUp, kBlue, -1}).find("clear"),
            std::string::npos);
  EXPECT_NE(blocks_action_error(start, {BlocksActionKind::kUnstack, kRed, kYellow}).find("really"),
            std::string::npos);
  EXPECT_NE(blocks_action_error(start, {BlocksActionKind::kPutDown, kRed, -1}).find("holding"),
            std::string::npos);
  EXPECT_NE(blocks_action_error(start, {BlocksActionKind::kStack, kYellow, kRed}).find("holding"),
            std::string::npos);
  EXPECT_THROW(blocks_apply(start, {BlocksActionKind::kPickUp, kBlue, -1}), Error);
  const BlocksState holding = blocks_apply(start, {BlocksActionKind::kPickUp, kYellow, -1});
  EXPECT_NE(blocks_action_error(holding, {BlocksActionKind::kUnstack, kRed, kBlue}).find("empty"),
            std::string::npos);
  EXPECT_NE(blocks_action_error(holding, {BlocksActionKind::kStack, kYellow, kBlue}).find("clear"),
            std::string::npos);
}

TEST(BlocksworldTest, StateErrorNamesTheBrokenInvariant) {
  EXPECT_EQ(blocks_state_error(BlocksState{{kBlue, kOnTable, kInHand}}), "");
  EXPECT_EQ(blocks_state_error(BlocksState{{kBlue, kRed, kOnTable}}), "blocks form a cycle through block 0");
  EXPECT_EQ(blocks_state_error(BlocksState{{kYellow, kYellow, kOnTable}}), "two blocks stand on block 2");
  EXPECT_EQ(blocks_state_error(BlocksState{{kInHand, kInHand, kOnTable}}), "2 blocks in the hand; at most one");
  EXPECT_EQ(blocks_state_error(BlocksState{{kBlue, kInHand, kOnTable}}), "block 0 stands on the held block 1");
  EXPECT_EQ(blocks_state_error(BlocksState{{kRed}}), "block 0 stands on invalid position 0");
  EXPECT_EQ(blocks_state_error(BlocksState{}), "0 blocks; expected 1..8");
}

TEST(BlocksworldTest, BfsPlanIsValidAndOptimalOnHandMadeInstances) {
  const BlocksInstance small = small_instance();
  const std::optional<std::vector<BlocksAction>> plan = blocks_optimal_plan(small.start, small.goal);
  ASSERT_TRUE(plan.has_value());
  EXPECT_EQ(plan_text(*plan, small.names),
            "unstack the red block from on top of the blue block\n"
            "put down the red block\n"
            "pick up the blue block\n"
            "stack the blue block on top of the red block\n");
  expect_valid_and_optimal(small);
  const BlocksInstance sussman = sussman_instance();
  EXPECT_EQ(blocks_optimal_plan(sussman.start, sussman.goal)->size(), 6u);
  expect_valid_and_optimal(sussman);
}

TEST(BlocksworldTest, BfsPlanIsValidAndOptimalOnRandomInstances) {
  std::mt19937_64 rng(7);
  for (int i = 0; i < 40; ++i) {
    const BlocksInstance instance = blocks_random_instance(rng, 3 + i % 2);
    expect_valid_and_optimal(instance);
  }
}

TEST(BlocksworldTest, PlanIsTheBreadthFirstSearchsPlan) {
  std::mt19937_64 rng(23);
  for (int i = 0; i < 60; ++i) {
    const BlocksInstance instance = blocks_random_instance(rng, 2 + i % 5);
    const auto plan = blocks_optimal_plan(instance.start, instance.goal);
    const auto expected = bfs_plan(instance.start, instance.goal);
    ASSERT_TRUE(plan.has_value() && expected.has_value());
    EXPECT_EQ(plan_text(*plan, instance.names), plan_text(*expected, instance.names))
        << "instance " << i << ", " << instance.start.num_blocks() << " blocks";
  }
}

TEST(BlocksworldTest, EightBlocksArePlannedOptimally) {
  // A breadth-first search visits ~700,000 states here; the plan must still
  // be its plan.
  std::mt19937_64 rng(5);
  for (int i = 0; i < 2; ++i) {
    const BlocksInstance instance = blocks_random_instance(rng, kBlocksMax);
    const auto plan = blocks_optimal_plan(instance.start, instance.goal);
    ASSERT_TRUE(plan.has_value());
    const PlanCheck check = blocks_validate_plan(instance, plan_text(*plan, instance.names));
    EXPECT_TRUE(check.reaches_goal()) << check.reason;
    EXPECT_EQ(plan_text(*plan, instance.names),
              plan_text(*bfs_plan(instance.start, instance.goal), instance.names));
  }
}

TEST(BlocksworldTest, GoalsThatNameTheTableOrTheHandArePlanned) {
  BlocksInstance instance = small_instance();  // red on blue
  instance.goal = {{kRed, kOnTable}, {kYellow, kInHand}};
  const auto plan = blocks_optimal_plan(instance.start, instance.goal);
  ASSERT_TRUE(plan.has_value());
  EXPECT_EQ(plan_text(*plan, instance.names), plan_text(*bfs_plan(instance.start, instance.goal), instance.names));
  EXPECT_EQ(plan->size(), 3u);  // unstack red, put it down, pick up yellow
}

TEST(BlocksworldTest, OptimalActionsAreExactlyThoseOneStepCloser) {
  std::mt19937_64 rng(11);
  for (int i = 0; i < 20; ++i) {
    const BlocksInstance instance = blocks_random_instance(rng, 3 + i % 3);
    const size_t distance = blocks_optimal_plan(instance.start, instance.goal)->size();
    const std::vector<BlocksAction> optimal = blocks_optimal_actions(instance.start, instance.goal);
    EXPECT_FALSE(optimal.empty());
    for (const BlocksAction& a : blocks_valid_actions(instance.start)) {
      const size_t after = blocks_optimal_plan(blocks_apply(instance.start, a), instance.goal)->size();
      const bool on_optimal_plan = after + 1 == distance;
      EXPECT_EQ(std::find(optimal.begin(), optimal.end(), a) != optimal.end(), on_optimal_plan);
    }
  }
}

TEST(BlocksworldTest, UnreachableGoalHasNoPlan) {
  BlocksInstance instance = small_instance();
  instance.goal = {{kRed, kBlue}, {kBlue, kRed}};
  EXPECT_FALSE(blocks_optimal_plan(instance.start, instance.goal).has_value());
  EXPECT_TRUE(blocks_optimal_actions(instance.start, instance.goal).empty());
}

TEST(BlocksworldTest, ContradictoryGoalsHaveNoPlanWithoutASearch) {
  // Eight blocks: proving these unreachable by search would visit every
  // state; each contradiction is seen in the facts themselves.
  BlocksState start;
  start.below.assign(kBlocksMax, kOnTable);
  const std::vector<std::vector<OnFact>> contradictions = {
      {{0, 1}, {1, 2}, {2, 0}},      // a cycle
      {{0, 1}, {0, 2}},              // one block in two places
      {{0, 2}, {1, 2}},              // two blocks on one
      {{0, kInHand}, {1, kInHand}},  // two blocks in the hand
      {{0, kInHand}, {1, 0}},        // a block on the held block
      {{3, 3}},                      // a block on itself
      {{kBlocksMax, 0}},             // no such block
      {{0, 99}},                     // no such place
  };
  for (const std::vector<OnFact>& goal : contradictions) {
    EXPECT_FALSE(blocks_optimal_plan(start, goal).has_value());
    EXPECT_TRUE(blocks_optimal_actions(start, goal).empty());
  }
}

TEST(BlocksworldTest, StatementUsesPlanBenchWording) {
  EXPECT_EQ(blocks_statement(small_instance()),
            "As initial conditions I have that, the red block is clear, the yellow block is "
            "clear, the hand is empty, the red block is on top of the blue block, the blue block "
            "is on the table and the yellow block is on the table.\nMy goal is to have that the "
            "blue block is on top of the red block.");
  const BlocksState holding = blocks_apply(small_instance().start,
                                           {BlocksActionKind::kPickUp, kYellow, -1});
  EXPECT_EQ(blocks_describe_state(holding, small_instance().names),
            "the red block is clear, I am holding the yellow block, the red block is on top of "
            "the blue block and the blue block is on the table");
}

// An instance as facts over names, independent of how blocks are numbered.
std::set<std::string> facts_by_name(const BlocksInstance& instance) {
  std::set<std::string> facts;
  for (int b = 0; b < instance.start.num_blocks(); ++b) {
    const int under = instance.start.below[static_cast<size_t>(b)];
    facts.insert(instance.names[static_cast<size_t>(b)] + " on " +
                 (under >= 0 ? instance.names[static_cast<size_t>(under)] : std::to_string(under)));
  }
  for (const OnFact& f : instance.goal) {
    facts.insert("goal " + instance.names[static_cast<size_t>(f.block)] + " on " +
                 instance.names[static_cast<size_t>(f.below)]);
  }
  return facts;
}

TEST(BlocksworldTest, ParseStatementInvertsStatement) {
  std::mt19937_64 rng(3);
  for (int i = 0; i < 30; ++i) {
    const BlocksInstance instance = blocks_random_instance(rng, 3 + i % 3);
    const std::optional<BlocksInstance> parsed = blocks_parse_statement(blocks_statement(instance));
    ASSERT_TRUE(parsed.has_value()) << blocks_statement(instance);
    // Blocks are numbered by first appearance, so compare facts by name.
    EXPECT_EQ(facts_by_name(*parsed), facts_by_name(instance)) << blocks_statement(instance);
    EXPECT_EQ(parsed->goal.size(), instance.goal.size());
  }
  for (const char* bad : {"", "My goal is to have that the red block is on top of the blue block.",
                          "As initial conditions I have that, the red block is clear, the hand is "
                          "empty and the red block is on the table.\nMy goal is to have that.",
                          "As initial conditions I have that, the hand is empty, the red block is "
                          "on the table.\nMy goal is to have that the red block is on top of the "
                          "blue block."}) {
    EXPECT_FALSE(blocks_parse_statement(bad).has_value()) << bad;
  }
}

TEST(BlocksworldTest, ParseActionReadsTheFourPhrasings) {
  const std::vector<std::string> names = small_instance().names;
  for (const BlocksAction& a :
       {BlocksAction{BlocksActionKind::kPickUp, kRed, -1},
        BlocksAction{BlocksActionKind::kUnstack, kRed, kBlue},
        BlocksAction{BlocksActionKind::kPutDown, kYellow, -1},
        BlocksAction{BlocksActionKind::kStack, kBlue, kYellow}}) {
    EXPECT_EQ(blocks_parse_action(blocks_action_text(a, names), names), a);
  }
  EXPECT_EQ(blocks_parse_action("  Pick up the RED block. ", names),
            (BlocksAction{BlocksActionKind::kPickUp, kRed, -1}));
  for (const char* bad : {"", "pick up the purple block", "pick up red", "lift the red block",
                          "stack the red block on the blue block", "pick up the red block now"}) {
    EXPECT_FALSE(blocks_parse_action(bad, names).has_value()) << bad;
  }
}

TEST(BlocksworldTest, ValidatorAcceptsAPlanWithMarkers) {
  const PlanCheck check = blocks_validate_plan(
      small_instance(),
      "[PLAN]\nunstack the red block from on top of the blue block\nput down the red block.\n\n"
      "Pick up the blue block\nstack the blue block on top of the red block\n[PLAN END]\n"
      "this text after the end is ignored");
  EXPECT_TRUE(check.reaches_goal()) << check.reason;
  EXPECT_EQ(check.num_actions, 4);
  EXPECT_EQ(check.failed_action, -1);
}

TEST(BlocksworldTest, ValidatorRejectsAnIllegalAction) {
  const PlanCheck check = blocks_validate_plan(
      small_instance(),
      "unstack the red block from on top of the blue block\npick up the blue block\n");
  EXPECT_EQ(check.verdict, PlanVerdict::kIllegalAction);
  EXPECT_EQ(check.failed_action, 1);
  EXPECT_NE(check.reason.find("hand is empty"), std::string::npos) << check.reason;
}

TEST(BlocksworldTest, ValidatorRejectsAPlanThatMissesTheGoal) {
  const PlanCheck check = blocks_validate_plan(
      small_instance(), "unstack the red block from on top of the blue block\nput down the red block\n");
  EXPECT_EQ(check.verdict, PlanVerdict::kGoalNotReached);
  EXPECT_EQ(check.num_actions, 2);
  EXPECT_EQ(blocks_validate_plan(small_instance(), "").verdict, PlanVerdict::kGoalNotReached);
}

TEST(BlocksworldTest, ValidatorReportsMalformedTextWithoutThrowing) {
  const PlanCheck check = blocks_validate_plan(
      small_instance(), "unstack the red block from on top of the blue block\n%%% nonsense\n");
  EXPECT_EQ(check.verdict, PlanVerdict::kUnparsableAction);
  EXPECT_EQ(check.failed_action, 1);
  EXPECT_EQ(blocks_validate_plan(small_instance(), std::string("\0\xff\n", 3)).verdict,
            PlanVerdict::kUnparsableAction);
}

TEST(BlocksworldTest, RandomInstancesAreDeterministicAndNonTrivial) {
  std::mt19937_64 a(42);
  std::mt19937_64 b(42);
  std::mt19937_64 c(43);
  bool any_difference = false;
  for (int i = 0; i < 30; ++i) {
    const int n = 3 + i % 3;
    const BlocksInstance x = blocks_random_instance(a, n);
    const BlocksInstance y = blocks_random_instance(b, n);
    const BlocksInstance z = blocks_random_instance(c, n);
    EXPECT_EQ(blocks_statement(x), blocks_statement(y));
    any_difference = any_difference || blocks_statement(x) != blocks_statement(z);
    EXPECT_EQ(x.start.num_blocks(), n);
    EXPECT_TRUE(blocks_state_error(x.start).empty());
    EXPECT_TRUE(x.start.hand_empty());
    EXPECT_FALSE(x.goal.empty());
    EXPECT_FALSE(blocks_goal_holds(x.start, x.goal));
  }
  EXPECT_TRUE(any_difference);
  EXPECT_THROW(blocks_random_instance(a, 1), Error);
  EXPECT_THROW(blocks_random_instance(a, kBlocksMax + 1), Error);
}

}  // namespace
}  // namespace seed::tasks
