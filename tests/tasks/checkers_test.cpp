// The registered checkers on hand-made right and wrong answers.
#include <gtest/gtest.h>

#include "tasks/blocksworld.h"
#include "tasks/checkers.h"
#include "tests/throws_error.h"

namespace seed::tasks {
namespace {

Problem problem(std::map<std::string, std::string> fields) {
  Problem p;
  p.fields = std::move(fields);
  return p;
}

CheckResult check(const std::string& name, const Problem& p, const std::string& text, const std::string& field = "",
                  const std::string& pattern = "") {
  return make_checker({name, field, pattern})->check(p, text);
}

TEST(Game24Checker, AcceptsAnExactExpressionOverThePuzzlesNumbers) {
  const Problem p = problem({{"input", "4 9 10 13"}});
  const CheckResult right = check("game24", p, "4 + 9 = 13 (left: 10 13 13)\nAnswer: (13 - 9) * (10 - 4) = 24\n");
  EXPECT_TRUE(right.correct) << right.reason;
  EXPECT_EQ(right.answer, "(13 - 9) * (10 - 4)");
  // 8 / (3 - 8 / 3) = 24 only in exact arithmetic.
  EXPECT_TRUE(check("game24", problem({{"input", "3 3 8 8"}}), "Answer: 8 / (3 - 8 / 3) = 24").correct);
}

TEST(Game24Checker, RejectsWrongValueWrongNumbersAndNoAnswerLine) {
  const Problem p = problem({{"input", "4 9 10 13"}});
  EXPECT_FALSE(check("game24", p, "Answer: (13 - 9) * (10 + 4) = 24").correct);
  EXPECT_FALSE(check("game24", p, "Answer: 4 * 6 = 24").correct);
  EXPECT_FALSE(check("game24", p, "Answer: (13 - 9) * (10 - 4) * 1 = 24").correct);
  const CheckResult none = check("game24", p, "4 + 9 = 13 (left: 10 13 13)\n");
  EXPECT_FALSE(none.correct);
  EXPECT_EQ(none.reason, "no 'Answer:' line");
}

TEST(NumericChecker, ComparesTheLastNumberWithTheGoldAfterHashes) {
  const Problem p = problem({{"answer", "She pays 3 * 6 = 18 dollars.\n#### 1,018"}});
  EXPECT_TRUE(check("numeric", p, "so 1000 + 18 = 1,018").correct);
  EXPECT_TRUE(check("numeric", p, "The answer is 1018.00").correct);
  const CheckResult wrong = check("numeric", p, "The answer is 18.");
  EXPECT_FALSE(wrong.correct);
  EXPECT_EQ(wrong.answer, "18");
  EXPECT_FALSE(check("numeric", p, "no idea").correct);
}

TEST(BlocksworldChecker, SimulatesThePlanFromTheStartState) {
  std::mt19937_64 rng(5);
  const BlocksInstance instance = blocks_random_instance(rng, 3);
  const auto plan = blocks_optimal_plan(instance.start, instance.goal);
  ASSERT_TRUE(plan.has_value() && !plan->empty());
  std::string text;
  for (const BlocksAction& action : *plan) text += blocks_action_text(action, instance.names) + "\n";
  const Problem p = problem({{"statement", blocks_statement(instance)}});
  const auto checker = make_checker({"blocksworld", "", ""});
  EXPECT_TRUE(checker->check(p, text + "[PLAN END]\n").correct);
  EXPECT_TRUE(checker->goal_reached(p, text));
  // Without its last action the goal is not reached; an illegal first action fails.
  const std::string shorter = text.substr(0, text.rfind('\n', text.size() - 2) + 1);
  EXPECT_FALSE(checker->check(p, shorter).correct);
  EXPECT_FALSE(checker->goal_reached(p, shorter));
  const CheckResult illegal = checker->check(p, "put down the " + instance.names[0] + " block\n" + text);
  EXPECT_FALSE(illegal.correct);
  EXPECT_FALSE(illegal.reason.empty());
}

TEST(ExactAndRegexCheckers, CompareTrimmedTextOrTheFirstGroup) {
  const Problem p = problem({{"answer", "Paris"}});
  EXPECT_TRUE(check("exact", p, "  Paris\n").correct);
  EXPECT_FALSE(check("exact", p, "paris").correct);
  EXPECT_TRUE(check("regex", p, "I think the capital is Paris.", "answer", "capital is (\\w+)").correct);
  EXPECT_FALSE(check("regex", p, "the capital is Lyon", "answer", "capital is (\\w+)").correct);
  EXPECT_TRUE(check("regex", p, "DONE", "", "^DONE$").correct);
  EXPECT_FALSE(check("regex", p, "not done", "", "^DONE$").correct);
}

TEST(ParagraphEndingsChecker, WantsOneParagraphPerSentenceEndingWithIt) {
  const Problem p = problem({{"input", "It rained. We sang!"}});
  EXPECT_FALSE(check("paragraph-endings", p, "Plan:\nx\n\nPassage:\nClouds came. It rained.\n\nThen we sang!\n"
                                            "\nWe sang!\n")
                   .correct);  // three paragraphs for two sentences
  EXPECT_TRUE(check("paragraph-endings", p, "Plan:\nx\n\nPassage:\nClouds came. It rained.\n\nThen... We sang!\n").correct);
  EXPECT_FALSE(check("paragraph-endings", p, "Passage:\nIt rained.\nWe danced.\n").correct);
}

TEST(MakeChecker, UnknownNamesAndBadPatternsAreErrors) {
  EXPECT_TRUE(seed::testing::throws_error([] { make_checker({"rouge", "", ""}); }, ErrorKind::kInvalidArgument,
                                          {"rouge", "numeric, game24"}));
  EXPECT_TRUE(seed::testing::throws_error([] { make_checker({"regex", "", ""}); }, ErrorKind::kInvalidArgument,
                                          {"pattern"}));
  EXPECT_TRUE(seed::testing::throws_error([] { make_checker({"regex", "", "(unclosed"}); },
                                          ErrorKind::kInvalidArgument, {"(unclosed"}));
  EXPECT_TRUE(seed::testing::throws_error([] { make_checker({"exact", "", "x"}); }, ErrorKind::kInvalidArgument,
                                          {"takes no pattern"}));
}

}  // namespace
}  // namespace seed::tasks
