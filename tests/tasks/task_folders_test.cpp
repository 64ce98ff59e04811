// The shipped task folders load, and the game24 and blocksworld prompts are
// byte for byte the formats the zoo models were trained on. GSM8K and
// creative writing are not shipped: their tests read the files from
// $SEED_DATA_DIR and are skipped, naming the file, when it is not there.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "tasks/corpus.h"
#include "tasks/corpus_formats.h"
#include "tasks/game24.h"
#include "tasks/task.h"
#include "tests/throws_error.h"

namespace seed::tasks {
namespace {

std::string folder(const std::string& name) { return std::string(SEED_TASKS_DIR) + "/" + name; }

// The options that find a data set outside the repository: $SEED_DATA_DIR.
TaskLoadOptions data_dir_options() {
  const char* dir = std::getenv("SEED_DATA_DIR");
  return {"", dir == nullptr ? "" : dir};
}

// Whether $SEED_DATA_DIR holds `file`; the reason to skip if not.
std::optional<std::string> missing_data_set(const std::string& file) {
  const std::string dir = data_dir_options().data_dir;
  if (dir.empty()) return "SEED_DATA_DIR is not set; it names the folder holding " + file;
  if (!std::filesystem::is_regular_file(std::filesystem::path(dir) / file)) return dir + "/" + file + " not found";
  return std::nullopt;
}

TEST(TaskFolders, Game24PromptsAreTheZooTrainingFormats) {
  const Task task = Task::load(folder("game24"));
  ASSERT_EQ(task.problems().size(), 100u);  // the test split
  EXPECT_EQ(task.problems().front().field("input"), "4 5 6 10");  // row 900 of Tree of Thoughts' 24.csv
  EXPECT_EQ(task.problems().back().field("input"), "4 9 10 13");  // row 999
  const Problem& p = task.problems()[0];
  const std::string input = p.field("input");
  EXPECT_EQ(task.cot_prompt(p), render_prompt(kGame24CotPrompt, {{"input", input}}));
  EXPECT_EQ(task.generation_prompt(0, p, State{}, {}), render_prompt(kGame24ProposePrompt, {{"input", input}}));
  const State s = task.state_from_text("1 + 1 = 2 (left: 2 4 6)\n");
  EXPECT_EQ(task.generation_prompt(0, p, s, {}), render_prompt(kGame24ProposePrompt, {{"input", "2 4 6"}}));
  EXPECT_EQ(task.evaluation_prompt(p, s), render_prompt(kGame24ValuePrompt, {{"input", "2 4 6"}}));
  EXPECT_EQ(task.answer_prompt(p, s),
            render_prompt(kGame24CotPrompt, {{"input", input}}) + "1 + 1 = 2 (left: 2 4 6)\n");
  EXPECT_TRUE(task.is_final(p, task.state_from_text("4 * 6 = 24 (left: 24)")));
  EXPECT_FALSE(task.is_final(p, task.state_from_text("4 * 6 = 24 (left: 1 24)")));
  EXPECT_EQ(task.parse_value("sure\n"), 20);
  // The worked check before the label holds no label word (tasks/game24.h).
  const std::string work = game24_value_check(*parse_numbers("2 4 6")).work;
  EXPECT_DOUBLE_EQ(*task.parse_value(work + "impossible\n"), 0.001);
  EXPECT_EQ(task.parse_value(work + "sure\n"), 20);
}

TEST(TaskFolders, BlocksworldPromptsAreTheZooTrainingFormats) {
  const Task task = Task::load(folder("blocksworld"));
  ASSERT_EQ(task.problems().size(), 100u);
  const Problem& p = task.problems()[3];
  const std::string statement = p.field("statement");
  const State s = task.state_from_text("pick up the red block\nstack the red block on top of the blue block\n");
  EXPECT_EQ(task.generation_prompt(0, p, s, {}),
            render_prompt(kBlocksworldNextActionPrompt,
                          {{"statement", statement},
                           {"plan", "pick up the red block\nstack the red block on top of the blue block\n"}}));
  EXPECT_EQ(task.evaluation_prompt(p, s),
            render_prompt(kBlocksworldEvaluatePrompt, {{"statement", statement},
                                                       {"plan", "pick up the red block\n"},
                                                       {"action", "stack the red block on top of the blue block"}}));
  EXPECT_EQ(task.cot_prompt(p), render_prompt(kBlocksworldPlanPrompt, {{"statement", statement}}));
}

TEST(TaskFolders, Gsm8kLoadsItsData) {
  if (const auto missing = missing_data_set("gsm8k/test.jsonl")) GTEST_SKIP() << *missing;
  const Task gsm8k = Task::load(folder("gsm8k"), data_dir_options());
  EXPECT_EQ(gsm8k.problems().size(), 1319u);
  EXPECT_EQ(gsm8k.spec().generate.stages.size(), 2u);
  const std::string gold = gsm8k.problems()[0].field("answer");
  EXPECT_TRUE(gsm8k.checker().check(gsm8k.problems()[0], gold.substr(gold.rfind("####"))).correct);
}

TEST(TaskFolders, CreativeWritingLoadsItsData) {
  if (const auto missing = missing_data_set("creative-writing/data_100_random_text.txt")) GTEST_SKIP() << *missing;
  const Task writing = Task::load(folder("creative-writing"), data_dir_options());
  EXPECT_EQ(writing.problems().size(), 100u);
}

// Each shipped task scores a whole chain of thought (best-of-n); GSM8K and
// creative writing by their chain prompts, over the chain as written.
TEST(TaskFolders, EveryTaskScoresAWholeChain) {
  const std::filesystem::path rows = std::filesystem::temp_directory_path() / "seed_task_folders_rows.jsonl";
  {
    std::ofstream out(rows);
    out << R"({"question": "Q?", "answer": "#### 4", "input": "A. B. C. D."})" << "\n";
  }
  for (const char* name : {"game24", "game24-prm", "blocksworld", "gsm8k", "creative-writing"}) {
    const bool prose = std::string(name) == "gsm8k" || std::string(name) == "creative-writing";
    const Task task = Task::load(folder(name), {prose ? rows.string() : "", ""});
    EXPECT_NO_THROW(task.check_scores_chains("best-of-n")) << name;
    if (!prose) continue;
    const std::string prompt = task.evaluation_prompt(task.problems()[0], task.state_from_text("One.\n\nTwo = 4.\n"));
    EXPECT_NE(prompt.find("One.\n\nTwo = 4.\n"), std::string::npos) << name << ": " << prompt;
  }
  std::filesystem::remove(rows);
}

TEST(TaskFolders, ADataPathGivenAtRunTimeReplacesTheDefault) {
  EXPECT_TRUE(seed::testing::throws_error([] { Task::load(folder("gsm8k"), {"/nonexistent/test.jsonl", ""}); },
                                          ErrorKind::kNotFound, {"gsm8k/task.json", "'data.path'", "/nonexistent"}));
}

TEST(TaskFolders, AMissingProseDataSetSaysHowToPointAtItAndWhereToGetIt) {
  EXPECT_TRUE(seed::testing::throws_error([] { Task::load(folder("gsm8k"), {"", "/nonexistent"}); },
                                          ErrorKind::kNotFound,
                                          {"gsm8k/task.json", "'data.path'", "/nonexistent/gsm8k/test.jsonl", "--data",
                                           "SEED_DATA_DIR", "gsm8k/README.md"}));
}

}  // namespace
}  // namespace seed::tasks
