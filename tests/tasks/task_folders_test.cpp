// The shipped task folders load, and the game24 and blocksworld prompts are
// byte for byte the formats the zoo models were trained on.
#include <gtest/gtest.h>

#include <filesystem>

#include "tasks/corpus.h"
#include "tasks/corpus_formats.h"
#include "tasks/game24.h"
#include "tasks/task.h"
#include "tests/throws_error.h"

namespace seed::tasks {
namespace {

std::string folder(const std::string& name) { return std::string(SEED_TASKS_DIR) + "/" + name; }

bool have(const std::string& dataset_file) {
  return std::filesystem::exists(std::string(SEED_DATASETS_DIR) + "/" + dataset_file);
}

TEST(TaskFolders, Game24PromptsAreTheZooTrainingFormats) {
  if (!have("game24/24.csv")) GTEST_SKIP() << "no 24.csv";
  const Task task = Task::load(folder("game24"));
  ASSERT_EQ(task.problems().size(), 100u);  // the test split
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

TEST(TaskFolders, Gsm8kAndCreativeWritingLoadTheirData) {
  if (have("gsm8k/test.jsonl")) {
    const Task gsm8k = Task::load(folder("gsm8k"));
    EXPECT_EQ(gsm8k.problems().size(), 1319u);
    EXPECT_EQ(gsm8k.spec().generate.stages.size(), 2u);
    const std::string gold = gsm8k.problems()[0].field("answer");
    EXPECT_TRUE(gsm8k.checker().check(gsm8k.problems()[0], gold.substr(gold.rfind("####"))).correct);
  }
  if (have("creative-writing/data_100_random_text.txt")) {
    const Task writing = Task::load(folder("creative-writing"));
    EXPECT_EQ(writing.problems().size(), 100u);
  }
}

TEST(TaskFolders, ADataPathGivenAtRunTimeReplacesTheDefault) {
  EXPECT_TRUE(seed::testing::throws_error([] { Task::load(folder("gsm8k"), {"/nonexistent/test.jsonl"}); },
                                          ErrorKind::kNotFound, {"gsm8k/task.json", "'data.path'", "/nonexistent"}));
}

}  // namespace
}  // namespace seed::tasks
