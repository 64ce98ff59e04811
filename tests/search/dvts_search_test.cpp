// DVTS on the scripted engine: subtrees dealt round-robin, greedy per subtree.
#include <gtest/gtest.h>

#include "search/search.h"
#include "tests/search/scripted_engine.h"
#include "tests/search/task_fixture.h"

namespace seed::search {
namespace {

using Prompts = std::vector<std::string>;

TEST(DvtsSearch, SplitsTheRootsThoughtsIntoSubtreesAndExpandsEachGreedily) {
  testing::TempTaskFolder folder(testing::toy_task_json(), R"({"input": "x", "answer": "cf"})" "\n");
  const tasks::Task task = tasks::Task::load(folder.path());
  testing::ScriptedEngine engine({
      {"gen\n", {"a\nb\nc\nd\n"}},
      {"val\na\n", {"v=2"}}, {"val\nb\n", {"v=8"}}, {"val\nc\n", {"v=6"}}, {"val\nd\n", {"v=1"}},
      {"gen\nc\n", {"e\nf\ng\n"}}, {"gen\nb\n", {"h\n"}},
      {"val\nc\ne\n", {"v=3"}}, {"val\nc\nf\n", {"v=7"}}, {"val\nb\nh\n", {"v=5"}},
      {"ans\nc\nf\n", {"cf"}},
  });
  SearchConfig config;
  config.algorithm = "dvts";
  config.params.beams = 4;
  config.params.beam_width = 2;
  config.params.depth = 2;
  const SearchResult result = make_search(config)->solve(task, task.problems()[0], engine);

  ASSERT_EQ(engine.batches().size(), 5u);
  EXPECT_EQ(engine.prompts(0), Prompts({"gen\n"}));
  EXPECT_EQ(engine.prompts(1), Prompts({"val\na\n", "val\nb\n", "val\nc\n", "val\nd\n"}));
  // Subtree 0 holds a, c and keeps c (6); subtree 1 holds b, d and keeps b (8).
  EXPECT_EQ(engine.prompts(2), Prompts({"gen\nc\n", "gen\nb\n"}));
  EXPECT_EQ(engine.prompts(3), Prompts({"val\nc\ne\n", "val\nc\nf\n", "val\nb\nh\n"}));  // width 2: no g
  EXPECT_EQ(engine.prompts(4), Prompts({"ans\nc\nf\n"}));
  const SearchTree& tree = result.tree;
  EXPECT_EQ(tree.node(1).subtree, 0);
  EXPECT_EQ(tree.node(2).subtree, 1);
  EXPECT_EQ(tree.node(3).subtree, 0);
  EXPECT_EQ(tree.node(4).subtree, 1);
  EXPECT_EQ(tree.node(6).subtree, 0);  // f under c
  EXPECT_EQ(tree.node(7).subtree, 1);  // h under b
  EXPECT_TRUE(tree.node(7).kept);      // subtree 1's best, though worse than subtree 0's
  EXPECT_EQ(tree.path(tree.chosen()), std::vector<int>({0, 3, 6}));
  EXPECT_EQ(result.answer, "cf");
}

}  // namespace
}  // namespace seed::search
