// Corpus generators: every example is correct per the solver / validator, the
// Game-of-24 test split never appears, and the corpus is deterministic.
#include "tasks/corpus.h"

#include <cstdint>
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <unistd.h>

#include "models/base/error.h"
#include "tasks/blocksworld.h"
#include "tasks/corpus_formats.h"

namespace seed::tasks {
namespace {

constexpr size_t kCsvRows = 1362;  // as many rows as ToT's 24.csv

// A stand-in for 24.csv: the first kCsvRows multisets of four numbers in
// 1..13, in lexicographic order, so the tests need no data files.
std::string write_synthetic_csv() {
  // Per process: ctest runs each test as its own process, several at once.
  const std::string path = ::testing::TempDir() + "seed_tasks_24_" + std::to_string(getpid()) + ".csv";
  std::ofstream out(path);
  out << "Rank,Puzzles,AMT (s)\n";
  size_t rows = 0;
  for (int a = 1; a <= 13; ++a) {
    for (int b = a; b <= 13; ++b) {
      for (int c = b; c <= 13; ++c) {
        for (int d = c; d <= 13 && rows < kCsvRows; ++d) {
          out << ++rows << "," << a << " " << b << " " << c << " " << d << ",1.0\n";
        }
      }
    }
  }
  return path;
}

CorpusConfig small_config(const std::string& csv) {
  CorpusConfig config;
  config.seed = 1234;
  config.game24_csv = csv;
  config.game24_propose = 300;
  config.game24_value = 300;
  config.game24_cot = 200;
  config.blocksworld_next_action = 120;
  config.blocksworld_evaluate_action = 120;
  config.blocksworld_plan = 80;
  return config;
}

std::vector<std::string> lines_of(std::string_view text) {
  std::vector<std::string> lines;
  while (!text.empty()) {
    const size_t end = text.find('\n');
    lines.emplace_back(text.substr(0, end));
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return lines;
}

std::string between(const std::string& text, const std::string& open, const std::string& close) {
  const size_t begin = text.find(open);
  EXPECT_NE(begin, std::string::npos) << open;
  const size_t end = text.find(close, begin + open.size());
  EXPECT_NE(end, std::string::npos) << close;
  return text.substr(begin + open.size(), end - begin - open.size());
}

// The numbers a Game-of-24 prompt asks about.
Numbers game24_input(const CorpusExample& e) {
  const std::string text =
      e.kind == "value" ? lines_of(e.prompt).at(1) : between(e.prompt, "Input: ", "\n");
  const std::optional<Numbers> numbers = parse_numbers(text);
  EXPECT_TRUE(numbers.has_value()) << e.prompt;
  return numbers.value_or(Numbers{});
}

std::set<std::string> test_keys(const std::string& csv) {
  std::set<std::string> keys;
  for (const Numbers& p : split_game24_puzzles(load_game24_csv(csv)).test) keys.insert(numbers_text(p));
  return keys;
}

// Replays a Blocksworld prompt's plan prefix; returns the instance and state.
std::pair<BlocksInstance, BlocksState> replay(const std::string& statement,
                                              const std::vector<std::string>& prefix) {
  const std::optional<BlocksInstance> instance = blocks_parse_statement(statement);
  EXPECT_TRUE(instance.has_value()) << statement;
  if (!instance) return {};
  BlocksState state = instance->start;
  for (const std::string& line : prefix) {
    const std::optional<BlocksAction> action = blocks_parse_action(line, instance->names);
    EXPECT_TRUE(action && blocks_action_error(state, *action).empty()) << line;
    if (action && blocks_action_error(state, *action).empty()) state = blocks_apply(state, *action);
  }
  EXPECT_FALSE(blocks_goal_holds(state, instance->goal)) << "prefix already reaches the goal";
  return {*instance, state};
}

class CorpusTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    csv_ = new std::string(write_synthetic_csv());
    corpus_ = new std::vector<CorpusExample>(generate_corpus(small_config(*csv_)));
  }
  static void TearDownTestSuite() {
    std::remove(csv_->c_str());
    delete corpus_;
    delete csv_;
  }
  static std::string* csv_;
  static std::vector<CorpusExample>* corpus_;
};
std::string* CorpusTest::csv_ = nullptr;
std::vector<CorpusExample>* CorpusTest::corpus_ = nullptr;

TEST_F(CorpusTest, HasTheConfiguredCountOfEachKind) {
  std::map<std::string, int> counts;
  for (const CorpusExample& e : *corpus_) ++counts[e.task + "/" + e.kind];
  EXPECT_EQ(counts["game24/propose"], 300);
  EXPECT_EQ(counts["game24/value"], 300);
  EXPECT_EQ(counts["game24/cot"], 200);
  EXPECT_EQ(counts["blocksworld/next_action"], 120);
  EXPECT_EQ(counts["blocksworld/evaluate_action"], 120);
  EXPECT_EQ(counts["blocksworld/plan"], 80);
  EXPECT_EQ(corpus_->size(), 1120u) << "every example is one of the six kinds";
}

TEST_F(CorpusTest, EveryProposedStepIsValidAndSolvableStepsComeFirst) {
  Game24Solver solver;
  for (const CorpusExample& e : *corpus_) {
    if (e.kind != "propose") continue;
    const Numbers state = game24_input(e);
    EXPECT_EQ(e.prompt, render_prompt(kGame24ProposePrompt, {{"input", numbers_text(state)}}));
    const std::vector<std::string> lines = lines_of(e.completion);
    ASSERT_FALSE(lines.empty());
    EXPECT_LE(lines.size(), 8u);
    EXPECT_EQ(e.completion.back(), '\n');
    // Solvable steps are listed first, and among them non-negative ones.
    size_t good_listed = 0;
    size_t good_non_negative_listed = 0;
    std::set<std::string> distinct;
    for (const std::string& line : lines) {
      const StepCheck check = check_step(line, state);
      ASSERT_TRUE(check.valid()) << e.prompt << line << ": " << check.reason;
      const bool good = solver.solvable(check.step->left);
      good_listed += good;
      good_non_negative_listed += good && check.step->result >= Rational(0);
      distinct.insert(line);
    }
    EXPECT_EQ(distinct.size(), lines.size());
    size_t good_total = 0;
    size_t good_non_negative_total = 0;
    for (const Game24Step& s : game24_next_steps(state)) {
      good_total += solver.solvable(s.left);
      good_non_negative_total += solver.solvable(s.left) && s.result >= Rational(0);
    }
    EXPECT_EQ(good_listed, std::min<size_t>(good_total, 8)) << e.prompt;
    EXPECT_EQ(good_non_negative_listed, std::min<size_t>(good_non_negative_total, 8)) << e.prompt;
  }
}

TEST_F(CorpusTest, ValueCompletionsAreTheWorkedCheckThenTheSolversLabel) {
  Game24Solver solver;
  std::map<std::string, int> classes;
  size_t worked = 0;
  for (const CorpusExample& e : *corpus_) {
    if (e.kind != "value") continue;
    const Numbers state = game24_input(e);
    const std::string label = game24_label_name(solver.label(state));
    const std::string work = game24_value_check(state).work;
    EXPECT_EQ(e.completion, work + label + "\n") << e.prompt;
    worked += !work.empty();
    ++classes[label];
  }
  EXPECT_GT(worked, 100u);  // two- and three-number states show their work
  // Not balanced: impossible states dominate, as around real puzzles.
  EXPECT_GT(classes["sure"], 30);
  EXPECT_GT(classes["impossible"], classes["sure"]);
  EXPECT_LT(classes["likely"], 30);
}

TEST_F(CorpusTest, ValueOnPathPercentSetsHowManyStatesAreSolvable) {
  const auto sure_share = [&](int on_path_percent) {
    CorpusConfig config = small_config(*csv_);
    config.game24_value_on_path_percent = on_path_percent;
    size_t sure = 0;
    const std::vector<CorpusExample> values = generate_corpus_kind(config, "value");
    for (const CorpusExample& e : values) sure += lines_of(e.completion).back() == "sure";
    return static_cast<double>(sure) / values.size();
  };
  const double random_steps = sure_share(0);
  const double on_path = sure_share(100);
  // Off the path most states are impossible; on it, only unsolvable puzzles'.
  EXPECT_LT(random_steps, 0.5);
  EXPECT_GT(on_path, 0.75);
  EXPECT_GT(sure_share(50), random_steps);
  EXPECT_LT(sure_share(50), on_path);
}

TEST_F(CorpusTest, EveryChainOfThoughtIsAValidSolution) {
  for (const CorpusExample& e : *corpus_) {
    if (e.kind != "cot") continue;
    const Numbers puzzle = game24_input(e);
    const std::vector<std::string> lines = lines_of(e.completion);
    ASSERT_EQ(lines.size(), puzzle.size()) << e.completion;  // n - 1 steps + the answer
    Numbers state = puzzle;
    for (size_t i = 0; i + 1 < puzzle.size(); ++i) {
      const StepCheck check = check_step(lines[i], state);
      ASSERT_TRUE(check.valid()) << lines[i] << ": " << check.reason;
      state = check.step->left;
    }
    EXPECT_EQ(numbers_text(state), "24");
    const std::optional<std::string> answer = extract_answer(e.completion);
    ASSERT_TRUE(answer.has_value()) << e.completion;
    EXPECT_TRUE(check_expression(*answer, puzzle).correct()) << *answer;
  }
}

TEST_F(CorpusTest, BlocksworldActionsLabelsAndPlansAreCorrect) {
  int good = 0;
  int bad = 0;
  for (const CorpusExample& e : *corpus_) {
    if (e.task != "blocksworld") continue;
    EXPECT_EQ(e.prompt.rfind(std::string(kBlocksworldPreamble), 0), 0u);
    if (e.kind == "next_action") {
      const std::string statement = between(e.prompt, "[STATEMENT]\n", "\nMy plan is as follows:");
      const auto [instance, state] =
          replay(statement, lines_of(between(e.prompt, "My plan is as follows:\n", "The current")));
      const std::optional<BlocksAction> action = blocks_parse_action(e.completion, instance.names);
      ASSERT_TRUE(action.has_value()) << e.completion;
      EXPECT_TRUE(blocks_action_error(state, *action).empty()) << e.completion;
    } else if (e.kind == "evaluate_action") {
      const std::string statement = between(e.prompt, "[STATEMENT]\n", "\n[ACTION]");
      std::vector<std::string> lines = lines_of(between(e.prompt, "[ACTION]\n", "\n[EVALUATION]"));
      const std::string last = lines.back();
      lines.pop_back();
      const auto [instance, state] = replay(statement, lines);
      const std::optional<BlocksAction> action = blocks_parse_action(last, instance.names);
      ASSERT_TRUE(action.has_value()) << last;
      EXPECT_TRUE(blocks_action_error(state, *action).empty()) << last;
      const std::vector<BlocksAction> optimal = blocks_optimal_actions(state, instance.goal);
      const bool is_good = std::find(optimal.begin(), optimal.end(), *action) != optimal.end();
      EXPECT_EQ(e.completion, is_good ? "good\n" : "bad\n");
      (is_good ? good : bad)++;
    } else {
      ASSERT_EQ(e.kind, "plan");
      const std::string statement = between(e.prompt, "[STATEMENT]\n", "\nMy plan is as follows:");
      const std::optional<BlocksInstance> instance = blocks_parse_statement(statement);
      ASSERT_TRUE(instance.has_value()) << statement;
      const PlanCheck check = blocks_validate_plan(*instance, e.completion);
      EXPECT_TRUE(check.reaches_goal()) << check.reason;
      EXPECT_EQ(static_cast<size_t>(check.num_actions),
                blocks_optimal_plan(instance->start, instance->goal)->size());
      EXPECT_NE(e.completion.find("[PLAN END]\n"), std::string::npos);
      EXPECT_GE(instance->start.num_blocks(), 3);
      EXPECT_LE(instance->start.num_blocks(), 5);
    }
  }
  EXPECT_EQ(good, 60);
  EXPECT_EQ(bad, 60);
}

TEST_F(CorpusTest, TestPuzzlesNeverAppearAsAnInput) {
  const std::set<std::string> keys = test_keys(*csv_);
  ASSERT_EQ(keys.size(), 100u);
  for (const CorpusExample& e : *corpus_) {
    if (e.task != "game24") continue;
    EXPECT_EQ(keys.count(numbers_text(game24_input(e))), 0u) << e.prompt;
  }
}

TEST(CorpusRealDataTest, TestPuzzlesOfTheRealCsvNeverAppear) {
  CorpusConfig config = small_config(SEED_GAME24_CSV);
  config.game24_random_percent = 0;  // only CSV rows: the strongest test of the split
  config.blocksworld_next_action = config.blocksworld_evaluate_action = config.blocksworld_plan = 0;
  const std::set<std::string> keys = test_keys(SEED_GAME24_CSV);
  ASSERT_EQ(keys.size(), 100u);
  for (const CorpusExample& e : generate_corpus(config)) {
    EXPECT_EQ(keys.count(numbers_text(game24_input(e))), 0u) << e.prompt;
  }
}

// Every step from each training puzzle, and from each of those every step
// that leaves two numbers that can make 24 and exactly one that leaves two
// that cannot; each labelled by the solver; no test puzzle.
TEST(CorpusRealDataTest, PrmStatesAreEveryFirstStepAndTheGoodSecondSteps) {
  CorpusConfig config = small_config(SEED_GAME24_CSV);
  config.game24_prm_states = true;
  const std::vector<CorpusExample> examples = generate_corpus_kind(config, "prm_states");
  const std::set<std::string> keys = test_keys(SEED_GAME24_CSV);
  Game24Solver solver;
  // Per (puzzle, first step): the second steps seen, split by label.
  std::map<std::string, std::pair<std::set<std::string>, int>> seconds;
  std::set<std::string> firsts;
  for (const CorpusExample& e : examples) {
    ASSERT_EQ(e.kind, "prm_states");
    const std::vector<std::string> lines = lines_of(e.prompt);
    ASSERT_TRUE(lines.size() == 2 || lines.size() == 3) << e.prompt;
    const Numbers puzzle = game24_input(e);
    EXPECT_EQ(keys.count(numbers_text(puzzle)), 0u) << e.prompt;
    Numbers state = puzzle;
    for (size_t i = 1; i < lines.size(); ++i) {
      ASSERT_EQ(lines[i].substr(lines[i].size() - kGame24PrmTag.size()), kGame24PrmTag) << e.prompt;
      const StepCheck check = check_step(lines[i].substr(0, lines[i].size() - kGame24PrmTag.size()), state);
      ASSERT_TRUE(check.valid()) << e.prompt << ": " << check.reason;
      state = check.step->left;
    }
    EXPECT_EQ(e.completion, solver.solvable(state) ? "+" : "-") << e.prompt;
    const std::string first = lines[0] + "\n" + lines[1];
    if (lines.size() == 2) {
      EXPECT_TRUE(firsts.insert(first).second) << "repeated: " << e.prompt;
    } else if (e.completion == "+") {
      EXPECT_TRUE(seconds[first].first.insert(lines[2]).second) << "repeated: " << e.prompt;
    } else {
      ++seconds[first].second;
    }
  }
  size_t expected_firsts = 0;
  for (const Numbers& puzzle : split_game24_puzzles(load_game24_csv(SEED_GAME24_CSV)).train) {
    for (const Game24Step& step : game24_next_steps(puzzle)) {
      const std::string first = "Input: " + numbers_text(puzzle) + "\n" + step.text() + std::string(kGame24PrmTag);
      ++expected_firsts;
      EXPECT_EQ(firsts.count(first), 1u) << first;
      size_t good = 0, bad = 0;
      for (const Game24Step& second : game24_next_steps(step.left)) (solver.solvable(second.left) ? good : bad)++;
      EXPECT_EQ(seconds[first].first.size(), good) << first;
      EXPECT_EQ(seconds[first].second, bad > 0 ? 1 : 0) << first;
    }
  }
  EXPECT_EQ(firsts.size(), expected_firsts);
}

TEST_F(CorpusTest, SameSeedGivesAnIdenticalCorpus) {
  const std::vector<CorpusExample> again = generate_corpus(small_config(*csv_));
  ASSERT_EQ(again.size(), corpus_->size());
  for (size_t i = 0; i < again.size(); ++i) {
    EXPECT_EQ(again[i].prompt, (*corpus_)[i].prompt);
    EXPECT_EQ(again[i].completion, (*corpus_)[i].completion);
  }
  CorpusConfig other = small_config(*csv_);
  other.seed += 1;
  const std::vector<CorpusExample> different = generate_corpus(other);
  size_t same = 0;
  for (size_t i = 0; i < different.size(); ++i) same += different[i].prompt == (*corpus_)[i].prompt;
  EXPECT_LT(same, different.size() / 10);
}

TEST_F(CorpusTest, OneKindDoesNotDependOnAnotherKindsCount) {
  CorpusConfig config = small_config(*csv_);
  config.game24_value = 30;
  const std::vector<CorpusExample> a = generate_corpus_kind(config, "cot");
  config.game24_value = 60;
  config.game24_propose = 0;
  const std::vector<CorpusExample> b = generate_corpus_kind(config, "cot");
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].completion, b[i].completion);
  EXPECT_THROW(generate_corpus_kind(config, "poem"), Error);
}

TEST_F(CorpusTest, WritesOneJsonObjectPerLine) {
  const std::string path = ::testing::TempDir() + "seed_tasks_corpus_" + std::to_string(getpid()) + ".jsonl";
  const std::vector<CorpusExample> head(corpus_->begin(), corpus_->begin() + 50);
  write_corpus_jsonl(path, head);
  std::ifstream in(path);
  std::string line;
  size_t i = 0;
  for (; std::getline(in, line); ++i) {
    const nlohmann::json j = nlohmann::json::parse(line);
    ASSERT_LT(i, head.size());
    EXPECT_EQ(j.size(), 4u);
    EXPECT_EQ(j.at("task"), head[i].task);
    EXPECT_EQ(j.at("kind"), head[i].kind);
    EXPECT_EQ(j.at("prompt"), head[i].prompt);
    EXPECT_EQ(j.at("completion"), head[i].completion);
  }
  EXPECT_EQ(i, head.size());
  std::remove(path.c_str());
  EXPECT_THROW(write_corpus_jsonl("/nonexistent/dir/corpus.jsonl", head), Error);
}

TEST(CorpusConfigTest, ValidateNamesTheBadField) {
  const auto message = [](const CorpusConfig& config) {
    try {
      config.validate();
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CorpusConfig config;
  EXPECT_NE(message(config).find("game24_csv"), std::string::npos);
  config.game24_csv = "24.csv";
  EXPECT_EQ(message(config), "");
  config.game24_value = -1;
  EXPECT_NE(message(config).find("game24_value"), std::string::npos);
  config.game24_value = 1;
  config.blocks_max = kBlocksMax + 1;
  EXPECT_NE(message(config).find("blocks_max"), std::string::npos);
  config.blocks_max = 5;
  config.game24_random_percent = 101;
  EXPECT_NE(message(config).find("game24_random_percent"), std::string::npos);
  config.game24_random_percent = 50;
  config.game24_value_on_path_percent = -1;
  EXPECT_NE(message(config).find("game24_value_on_path_percent"), std::string::npos);
}

TEST(RenderPromptTest, FillsFieldsAndRejectsMissingOrUnusedOnes) {
  EXPECT_EQ(render_prompt(kGame24ValuePrompt, {{"input", "4 9 10 13"}}),
            "Evaluate if given numbers can reach 24 (sure/likely/impossible)\n4 9 10 13\n");
  EXPECT_THROW(render_prompt(kGame24ValuePrompt, {}), Error);
  EXPECT_THROW(render_prompt(kGame24ValuePrompt, {{"input", "1"}, {"extra", "2"}}), Error);
  EXPECT_THROW(render_prompt("{unclosed", {}), Error);
}

TEST(Game24SplitTest, TestRowsAreExcludedFromTrainingEvenAsDuplicates) {
  std::vector<Numbers> puzzles;
  for (size_t i = 0; i < kCsvRows; ++i) puzzles.push_back({Rational(static_cast<int64_t>(i))});
  puzzles[5] = puzzles[950];  // a training row equal to a test puzzle
  const Game24Split split = split_game24_puzzles(puzzles);
  EXPECT_EQ(split.test.size(), 100u);
  EXPECT_EQ(split.train.size(), kCsvRows - 101);
  EXPECT_THROW(split_game24_puzzles(std::vector<Numbers>(999, Numbers{Rational(1)})), Error);
}

}  // namespace
}  // namespace seed::tasks
