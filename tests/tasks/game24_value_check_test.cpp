// The Game-of-24 value check: its text, and that its label is the solver's on
// every state a search meets below a four-number puzzle.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tasks/game24.h"

namespace seed::tasks {
namespace {

Numbers nums(const char* text) { return *parse_numbers(text); }

void expect_check(const char* state, const std::string& work, Game24Label label) {
  const Game24ValueCheck check = game24_value_check(nums(state));
  EXPECT_EQ(check.work, work) << state;
  EXPECT_EQ(check.label, label) << state;
}

TEST(Game24ValueCheckTest, TwoNumbersListWhatThePairMakes) {
  expect_check("20 4", "4 20: 24 16 -16 80 5 1/5 | 24\n", Game24Label::kSure);
  expect_check("0 1", "0 1: 1 -1 0 | no\n", Game24Label::kImpossible);  // 1 / 0 is skipped, 0 * 1 == 1 - 1
}

TEST(Game24ValueCheckTest, ThreeNumbersTryEveryPairAgainstTheThird) {
  expect_check("9 4 6",
               "9: 15 33 -15 8/3 216 3/8 | 4 6: 10 2 -2 24 3/2 2/3 | no\n"
               "6: 18 30 -18 4 144 1/4 | 4 9: 13 5 -5 36 9/4 4/9 | no\n"
               "4: 20 28 -20 6 96 1/6 | 6 9: 15 3 -3 54 3/2 2/3 | no\n",
               Game24Label::kImpossible);
}

TEST(Game24ValueCheckTest, AnIntegerMatchEndsTheCheckAndAFractionOnlyMakesItLikely) {
  expect_check("2 3 4", "4: 20 28 -20 6 96 1/6 | 2 3: 5 1 -1 6 3/2 2/3 | 6\n", Game24Label::kSure);
  expect_check("8/3 3 8",  // 8 / (3 - 8/3)
               "8: 16 32 -16 3 192 1/3 | 8/3 3: 17/3 1/3 -1/3 8 9/8 8/9 | 1/3\n"
               "3: 21 27 -21 8 72 1/8 | 8/3 8: 32/3 16/3 -16/3 64/3 3 1/3 | no\n"
               "8/3: 64/3 80/3 -64/3 9 64 1/9 | 3 8: 11 5 -5 24 8/3 3/8 | no\n",
               Game24Label::kLikely);
}

TEST(Game24ValueCheckTest, RepeatedPairsAreCheckedOnceAndRepeatedValuesListedOnce) {
  expect_check("5 1 5",
               "5: 19 29 -19 24/5 120 5/24 | 1 5: 6 4 -4 5 1/5 | no\n"
               "1: 23 25 -23 24 1/24 | 5 5: 10 0 25 1 | 25\n",
               Game24Label::kSure);
}

TEST(Game24ValueCheckTest, OneNumberIsSureOnlyAt24AndFourNumbersHaveNoWork) {
  EXPECT_EQ(game24_value_check(nums("24")).label, Game24Label::kSure);
  EXPECT_EQ(game24_value_check(nums("23")).label, Game24Label::kImpossible);
  EXPECT_EQ(game24_value_check(nums("24")).work, "");
  EXPECT_EQ(game24_value_check(nums("4 9 10 13")).work, "");
}

// The label is the solver's on every state below every puzzle of four numbers
// in [1, 13]: every three- and two-number state a search can evaluate.
TEST(Game24ValueCheckTest, LabelIsTheSolversOnEveryStateBelowEveryPuzzle) {
  Game24Solver solver;
  size_t checked = 0;
  for (int a = 1; a <= 13; ++a) {
    for (int b = a; b <= 13; ++b) {
      for (int c = b; c <= 13; ++c) {
        for (int d = c; d <= 13; ++d) {
          for (const Game24Step& step : game24_next_steps({a, b, c, d})) {
            ASSERT_EQ(game24_value_check(step.left).label, solver.label(step.left)) << numbers_text(step.left);
            const std::vector<Game24Step> below = game24_next_steps(step.left);
            for (const Game24Step& next : below) {
              ASSERT_EQ(game24_value_check(next.left).label, solver.label(next.left)) << numbers_text(next.left);
            }
            checked += 1 + below.size();
          }
        }
      }
    }
  }
  EXPECT_GT(checked, 300000u);
}

}  // namespace
}  // namespace seed::tasks
