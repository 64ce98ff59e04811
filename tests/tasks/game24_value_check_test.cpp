// The Game-of-24 value check: its text, and that its label is the solver's on
// every state a search meets below a four-number puzzle.
#include <gtest/gtest.h>

#include "tasks/game24.h"

namespace seed::tasks {
namespace {

Numbers nums(const char* text) { return *parse_numbers(text); }

TEST(Game24ValueCheckTest, TwoNumbersListWhatThePairMakes) {
  const Game24ValueCheck hit = game24_value_check(nums("20 4"));
  EXPECT_EQ(hit.work, "4 20: 24 16 -16 80 5 1/5 | 24\n");
  EXPECT_EQ(hit.label, Game24Label::kSure);
  const Game24ValueCheck miss = game24_value_check(nums("0 1"));
  EXPECT_EQ(miss.work, "0 1: 1 -1 0 | no\n");  // 1 / 0 is skipped, 0 * 1 == 1 - 1
  EXPECT_EQ(miss.label, Game24Label::kImpossible);
}

TEST(Game24ValueCheckTest, ThreeNumbersTryEveryPairAgainstTheThird) {
  const Game24ValueCheck none = game24_value_check(nums("9 4 6"));
  EXPECT_EQ(none.work,
            "9: 15 33 -15 8/3 216 3/8 | 4 6: 10 2 -2 24 3/2 2/3 | no\n"
            "6: 18 30 -18 4 144 1/4 | 4 9: 13 5 -5 36 9/4 4/9 | no\n"
            "4: 20 28 -20 6 96 1/6 | 6 9: 15 3 -3 54 3/2 2/3 | no\n");
  EXPECT_EQ(none.label, Game24Label::kImpossible);
}

TEST(Game24ValueCheckTest, AnIntegerMatchEndsTheCheckAndAFractionOnlyMakesItLikely) {
  const Game24ValueCheck sure = game24_value_check(nums("2 3 4"));
  EXPECT_EQ(sure.work, "4: 20 28 -20 6 96 1/6 | 2 3: 5 1 -1 6 3/2 2/3 | 6\n");
  EXPECT_EQ(sure.label, Game24Label::kSure);
  const Game24ValueCheck likely = game24_value_check(nums("8/3 3 8"));  // 8 / (3 - 8/3)
  EXPECT_EQ(likely.work,
            "8: 16 32 -16 3 192 1/3 | 8/3 3: 17/3 1/3 -1/3 8 9/8 8/9 | 1/3\n"
            "3: 21 27 -21 8 72 1/8 | 8/3 8: 32/3 16/3 -16/3 64/3 3 1/3 | no\n"
            "8/3: 64/3 80/3 -64/3 9 64 1/9 | 3 8: 11 5 -5 24 8/3 3/8 | no\n");
  EXPECT_EQ(likely.label, Game24Label::kLikely);
}

TEST(Game24ValueCheckTest, RepeatedPairsAreCheckedOnceAndRepeatedValuesListedOnce) {
  const Game24ValueCheck check = game24_value_check(nums("5 1 5"));
  EXPECT_EQ(check.work,
            "5: 19 29 -19 24/5 120 5/24 | 1 5: 6 4 -4 5 1/5 | no\n"
            "1: 23 25 -23 24 1/24 | 5 5: 10 0 25 1 | 25\n");
  EXPECT_EQ(check.label, Game24Label::kSure);
}

TEST(Game24ValueCheckTest, OneNumberIsSureOnlyAt24AndFourNumbersHaveNoWork) {
  EXPECT_EQ(game24_value_check(nums("24")).label, Game24Label::kSure);
  EXPECT_EQ(game24_value_check(nums("23")).label, Game24Label::kImpossible);
  EXPECT_EQ(game24_value_check(nums("24")).work, "");
  EXPECT_EQ(game24_value_check(nums("4 9 10 13")).work, "");
}

// The label is the solver's on every state below every puzzle of four numbers
// in [1, 13]: the three- and two-number states a search evaluates.
TEST(Game24ValueCheckTest, LabelIsTheSolversOnEveryStateBelowEveryPuzzle) {
  Game24Solver solver;
  size_t checked = 0;
  for (int a = 1; a <= 13; ++a) {
    for (int b = a; b <= 13; ++b) {
      for (int c = b; c <= 13; ++c) {
        for (int d = c; d <= 13; ++d) {
          for (const Game24Step& step : game24_next_steps({a, b, c, d})) {
            for (const Numbers& state : {step.left, game24_next_steps(step.left).front().left}) {
              ASSERT_EQ(game24_value_check(state).label, solver.label(state)) << numbers_text(state);
              ++checked;
            }
          }
        }
      }
    }
  }
  EXPECT_GT(checked, 50000u);
}

}  // namespace
}  // namespace seed::tasks
