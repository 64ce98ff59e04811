// The tasks' step checkers on hand-made equivalent and different steps.
#include <gtest/gtest.h>

#include "tasks/step_checkers.h"
#include "tests/throws_error.h"

namespace seed::tasks {
namespace {

TEST(StepCheckers, Game24StepsAreTheSameWhenTheyLeaveTheSameNumbers) {
  const StepChecker same = make_step_checker("game24");
  EXPECT_TRUE(same("4 + 8 = 12 (left: 3 5 12)", "8 + 4 = 12 (left: 12 3 5)"));
  EXPECT_TRUE(same("6 / 4 = 3/2 (left: 3/2 2)", "6 / 4 = 6/4 (left: 2 6/4)"));  // one number, two spellings
  EXPECT_TRUE(same("13 - 1 = 12 (left: 12 12)", "1 + 11 = 12 (left: 12 12)"));  // different sums, same state
  EXPECT_FALSE(same("4 + 8 = 12 (left: 3 5 12)", "4 * 8 = 32 (left: 3 5 32)"));
  EXPECT_FALSE(same("4 + 8 = 12 (left: 3 5 12)", "4 + 8 = 12 (left: 3 12)"));
  EXPECT_TRUE(same("Answer: (4 + 8) * 2 = 24", "Answer: (4 + 8) * 2 = 24"));  // no list: the same text only
  EXPECT_FALSE(same("Answer: (4 + 8) * 2 = 24", "Answer: 2 * (4 + 8) = 24"));
}

TEST(StepCheckers, BlocksworldStepsAreTheSameAction) {
  const StepChecker same = make_step_checker("blocksworld");
  EXPECT_TRUE(same("unstack the red block from on top of the blue block",
                   "Unstack the red block from on top of the blue block."));
  EXPECT_FALSE(same("unstack the red block from on top of the blue block", "pick up the red block"));
  EXPECT_FALSE(same("stack the red block on top of the blue block", "stack the blue block on top of the red block"));
  EXPECT_TRUE(same("[PLAN END]", "[PLAN END]"));  // not actions: the same text only
  EXPECT_FALSE(same("[PLAN END]", "put down the red block"));
}

TEST(StepCheckers, AnUnknownNameListsTheKnownOnes) {
  EXPECT_TRUE(seed::testing::throws_error([] { make_step_checker("chess"); }, ErrorKind::kInvalidArgument,
                                          {"chess", "game24", "blocksworld"}));
}

TEST(StepCheckers, TheHiddenStateVerifierTakesAnOptionalThreshold) {
  std::optional<double> threshold = 0.5;
  EXPECT_TRUE(parse_hidden_verifier("hidden", "x", &threshold));
  EXPECT_FALSE(threshold.has_value());
  EXPECT_TRUE(parse_hidden_verifier("hidden:0.9", "x", &threshold));
  EXPECT_DOUBLE_EQ(*threshold, 0.9);
  EXPECT_TRUE(parse_hidden_verifier("hidden:-1", "x", &threshold));
  EXPECT_DOUBLE_EQ(*threshold, -1.0);
  EXPECT_FALSE(parse_hidden_verifier("game24", "x", &threshold));
  EXPECT_FALSE(parse_hidden_verifier("hiddenness", "x", &threshold));
  for (const char* bad : {"hidden:", "hidden:1.5", "hidden:high", "hidden:0.9x"}) {
    EXPECT_TRUE(seed::testing::throws_error([&] { parse_hidden_verifier(bad, "task.json: field 'v'", &threshold); },
                                            ErrorKind::kInvalidArgument, {"field 'v'", bad, "[-1, 1]"}))
        << bad;
  }
}

}  // namespace
}  // namespace seed::tasks
