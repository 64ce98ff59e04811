// Game of 24: step enumeration, the exact solver and its labels, the step and
// expression checkers.
#include "tasks/game24.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <set>

#include "models/base/error.h"
#include "tests/throws_error.h"

namespace seed::tasks {
namespace {

Numbers nums(const char* text) { return *parse_numbers(text); }

TEST(Game24Test, ParsePuzzleReadsIntegersAndRejectsOtherText) {
  EXPECT_EQ(numbers_text(parse_puzzle("4 9 10 13")), "4 9 10 13");
  EXPECT_EQ(numbers_text(parse_puzzle("13  4 10 9")), "4 9 10 13");
  for (const char* bad : {"", "4 9 x 13", "1/2 3 4 5"}) {
    EXPECT_THROW(parse_puzzle(bad), Error) << bad;
  }
}

TEST(Game24Test, StepTextMatchesTreeOfThoughtsFormat) {
  const std::vector<Game24Step> steps = game24_next_steps(nums("4 9 10 13"));
  std::set<std::string> texts;
  for (const Game24Step& s : steps) texts.insert(s.text());
  EXPECT_EQ(texts.count("4 + 9 = 13 (left: 10 13 13)"), 1u);
  EXPECT_EQ(texts.count("13 - 9 = 4 (left: 4 4 10)"), 1u);
  EXPECT_EQ(texts.count("4 - 9 = -5 (left: -5 10 13)"), 1u);
  EXPECT_EQ(texts.count("4 / 10 = 2/5 (left: 2/5 9 13)"), 1u);
  EXPECT_EQ(texts.count("10 / 4 = 5/2 (left: 5/2 9 13)"), 1u);
}

TEST(Game24Test, EveryEnumeratedStepIsArithmeticallyCorrectAndDistinct) {
  for (const char* state : {"4 9 10 13", "1 1 1 1", "2/3 5 7", "0 4", "6 6", "-3 1/2 8"}) {
    const Numbers numbers = nums(state);
    std::set<std::string> seen;
    for (const Game24Step& step : game24_next_steps(numbers)) {
      const RationalResult r = game24_apply(step.a, step.op, step.b);
      ASSERT_TRUE(r.ok()) << step.text();
      EXPECT_EQ(r.value, step.result) << step.text();
      EXPECT_TRUE(std::is_sorted(step.left.begin(), step.left.end())) << step.text();
      EXPECT_EQ(step.left.size(), numbers.size() - 1);
      EXPECT_TRUE(check_step(step.text(), numbers).valid()) << step.text();
      EXPECT_TRUE(seen.insert(step.text()).second) << "duplicate " << step.text();
    }
  }
}

TEST(Game24Test, EnumerationCoversBothOrdersAndSkipsDivisionByZero) {
  // 2 5: 2+5, 5-2, 2-5, 2*5, 5/2, 2/5.
  EXPECT_EQ(game24_next_steps(nums("2 5")).size(), 6u);
  // 3 3: + - * / once each (3-3 and 3/3 have one order).
  EXPECT_EQ(game24_next_steps(nums("3 3")).size(), 4u);
  // 0 4: 0+4, 4-0, 0-4, 0*4, 0/4; 4/0 skipped.
  EXPECT_EQ(game24_next_steps(nums("0 4")).size(), 5u);
  EXPECT_TRUE(game24_next_steps(nums("24")).empty());
}

TEST(Game24Test, SolverDecidesKnownPuzzles) {
  Game24Solver solver;
  EXPECT_TRUE(solver.solvable(nums("4 9 10 13")));
  EXPECT_TRUE(solver.solvable(nums("1 1 4 6")));
  EXPECT_TRUE(solver.solvable(nums("3 3 8 8")));  // 8 / (3 - 8/3)
  EXPECT_FALSE(solver.solvable(nums("1 1 1 1")));
  EXPECT_FALSE(solver.solvable(nums("1 1 1 2")));
  EXPECT_TRUE(solver.solvable(nums("24")));
  EXPECT_FALSE(solver.solvable(nums("23")));
}

TEST(Game24Test, LabelRuleSureLikelyImpossible) {
  Game24Solver solver;
  EXPECT_EQ(solver.label(nums("4 9 10 13")), Game24Label::kSure);  // (13-9)*(10-4)
  EXPECT_EQ(solver.label(nums("4 6")), Game24Label::kSure);
  EXPECT_EQ(solver.label(nums("24")), Game24Label::kSure);
  EXPECT_EQ(solver.label(nums("1/2 48")), Game24Label::kSure);  // the step result is 24
  // Only through a fraction: 8 / (3 - 8/3), 5 * (5 - 1/5), 6 / (1 - 3/4).
  EXPECT_EQ(solver.label(nums("3 3 8 8")), Game24Label::kLikely);
  EXPECT_EQ(solver.label(nums("1 5 5 5")), Game24Label::kLikely);
  EXPECT_EQ(solver.label(nums("1 3 4 6")), Game24Label::kLikely);
  EXPECT_EQ(solver.label(nums("8/3 3 8")), Game24Label::kLikely);  // 8 / (3 - 8/3)
  EXPECT_EQ(solver.label(nums("1 5 5")), Game24Label::kSure);       // 5 * 5 - 1
  EXPECT_EQ(solver.label(nums("1 1 1 1")), Game24Label::kImpossible);
  EXPECT_EQ(solver.label(nums("2 3")), Game24Label::kImpossible);
  EXPECT_EQ(solver.label(nums("23")), Game24Label::kImpossible);
  EXPECT_STREQ(game24_label_name(Game24Label::kLikely), "likely");
}

TEST(Game24Test, ExpressionFromStepsUsesMinimalParentheses) {
  const Numbers start = nums("4 9 10 13");
  std::vector<Game24Step> steps;
  Numbers state = start;
  for (const char* line : {"13 - 9 = 4 (left: 4 4 10)", "10 - 4 = 6 (left: 4 6)",
                           "4 * 6 = 24 (left: 24)"}) {
    const StepCheck check = check_step(line, state);
    ASSERT_TRUE(check.valid()) << line << ": " << check.reason;
    steps.push_back(*check.step);
    state = check.step->left;
  }
  // The 4 of "10 - 4" is the puzzle's 4 or 13 - 9; either reads correctly.
  const std::optional<std::string> expression = expression_from_steps(start, steps);
  ASSERT_TRUE(expression.has_value());
  EXPECT_TRUE(check_expression(*expression, start).correct()) << *expression;
  const Numbers fraction = nums("3 3 8 8");
  std::vector<Game24Step> chain;
  state = fraction;
  for (const char* line : {"8 / 3 = 8/3 (left: 8/3 3 8)", "3 - 8/3 = 1/3 (left: 1/3 8)",
                           "8 / 1/3 = 24 (left: 24)"}) {
    const StepCheck check = check_step(line, state);
    ASSERT_TRUE(check.valid()) << line << ": " << check.reason;
    chain.push_back(*check.step);
    state = check.step->left;
  }
  EXPECT_EQ(expression_from_steps(fraction, chain), "8 / (3 - 8 / 3)");
}

TEST(Game24Test, CheckStepNamesWhatIsWrong) {
  const Numbers state = nums("4 9 10 13");
  EXPECT_EQ(check_step("4 + 9 = 13 (left: 10 13 13)", state).verdict, StepVerdict::kValid);
  EXPECT_EQ(check_step("  4 + 9 = 13 (left: 13 13 10)  ", state).verdict, StepVerdict::kValid);
  EXPECT_EQ(check_step("4 + 9 = 14 (left: 10 13 14)", state).verdict, StepVerdict::kWrongResult);
  EXPECT_EQ(check_step("4 + 5 = 9 (left: 9 10 13)", state).verdict, StepVerdict::kNotInState);
  EXPECT_EQ(check_step("4 + 4 = 8 (left: 8 10 13)", state).verdict, StepVerdict::kNotInState);
  EXPECT_EQ(check_step("4 + 9 = 13 (left: 10 13)", state).verdict, StepVerdict::kWrongLeft);
  EXPECT_EQ(check_step("13 / 0 = 1 (left: 1)", nums("0 13")).verdict, StepVerdict::kWrongResult);
  for (const char* bad : {"", "4 + 9 = 13", "4 plus 9 = 13 (left: 10 13 13)",
                          "4 + 9 = 13.0 (left: 10 13 13)", "(left: 1 2)", "4 + 9 = 13 (left: )"}) {
    EXPECT_EQ(check_step(bad, state).verdict, StepVerdict::kUnparsable) << bad;
  }
}

TEST(Game24Test, CheckExpressionAcceptsRightAnswers) {
  const Numbers puzzle = nums("4 9 10 13");
  EXPECT_TRUE(check_expression("(13 - 9) * (10 - 4)", puzzle).correct());
  EXPECT_TRUE(check_expression("(10 - 4) * (13 - 9) = 24", puzzle).correct());
  EXPECT_TRUE(check_expression("  ( ( 13-9 )*( 10-4 ) )  ", puzzle).correct());
  EXPECT_TRUE(check_expression("8 / (3 - 8 / 3)", nums("3 3 8 8")).correct());
  EXPECT_TRUE(check_expression("4 * 6 * 1 * 1", nums("1 1 4 6")).correct());
  EXPECT_EQ(check_expression("(13 - 9) * (10 - 4)", puzzle).value, Rational(24));
}

TEST(Game24Test, CheckExpressionRejectsWrongAnswersWithAReason) {
  const Numbers puzzle = nums("4 9 10 13");
  const struct {
    std::string expression;
    ExpressionVerdict verdict;
  } cases[] = {
      {"13 + 9 + 10 - 4", ExpressionVerdict::kNotTwentyFour},        // 28
      {"4 * 6", ExpressionVerdict::kWrongNumbers},                   // missing numbers
      {"(13 - 9) * (10 - 4) + 9 - 9", ExpressionVerdict::kWrongNumbers},  // 9 twice, extra
      {"(13 - 9) * (10 - 4) * 1", ExpressionVerdict::kWrongNumbers},      // extra number
      {"(13 - 4) * (10 - 4)", ExpressionVerdict::kWrongNumbers},          // 4 twice, no 9
      {"4 * 9 / (10 - 10) + 13", ExpressionVerdict::kWrongNumbers},
      {"garbage", ExpressionVerdict::kUnparsable},
      {"", ExpressionVerdict::kUnparsable},
      {"(13 - 9) * (10 - 4", ExpressionVerdict::kUnparsable},
      {"13 - 9) * (10 - 4)", ExpressionVerdict::kUnparsable},
      {"-4 + 9 + 10 + 13", ExpressionVerdict::kUnparsable},  // no unary minus
      {"4.0 * 6", ExpressionVerdict::kUnparsable},
      {"99999999999999999999 + 4", ExpressionVerdict::kUnparsable},
      {std::string(1000, '(') + "4", ExpressionVerdict::kUnparsable},
  };
  for (const auto& c : cases) {
    const ExpressionCheck check = check_expression(c.expression, puzzle);
    EXPECT_EQ(check.verdict, c.verdict) << c.expression << ": " << check.reason;
    EXPECT_FALSE(check.reason.empty()) << c.expression;
  }
  EXPECT_EQ(check_expression("4 / (9 - 9)", nums("4 9 9")).verdict,
            ExpressionVerdict::kArithmeticError);
}

TEST(Game24Test, ExtractAnswerTakesTheLastAnswerLine) {
  EXPECT_EQ(extract_answer("4 + 9 = 13 (left: 10 13 13)\nAnswer: (13 - 9) * (10 - 4) = 24\n"),
            "(13 - 9) * (10 - 4)");
  EXPECT_EQ(extract_answer("answer: 1 + 2\nANSWER:  3 * 8  = 24"), "3 * 8");
  EXPECT_FALSE(extract_answer("no answer here\n").has_value());
}

TEST(Game24Test, LoadCsvReportsMissingFileAndColumn) {
  try {
    load_game24_csv("/nonexistent/24.csv");
    FAIL() << "expected seed::Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kNotFound);
  }
}

TEST(Game24Test, LoadCsvNamesTheFileAndLineOfABadPuzzle) {
  const std::string path = ::testing::TempDir() + "seed_bad_24.csv";
  {
    std::ofstream out(path);
    out << "Rank,Puzzles\n1,1 1 4 6\n\n2,1 2 x 4\n";
  }
  EXPECT_TRUE(::seed::testing::throws_error([&] { load_game24_csv(path); }, ErrorKind::kInvalidArgument,
                                            {path + ":4: ", "'1 2 x 4'"}));
  std::remove(path.c_str());
}

}  // namespace
}  // namespace seed::tasks
