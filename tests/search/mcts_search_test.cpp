// MCTS on the scripted engine: PUCT selection under virtual loss, batched
// rounds, backpropagation, the final choice. Expected numbers are worked by
// hand in the comments (c_puct = 1, values v/10).
#include <gtest/gtest.h>

#include "search/search.h"
#include "tests/search/scripted_engine.h"
#include "tests/search/task_fixture.h"

namespace seed::search {
namespace {

using Prompts = std::vector<std::string>;

TEST(MctsSearch, SelectsUnderVirtualLossExpandsInBatchesAndBacksUp) {
  testing::TempTaskFolder folder(testing::toy_task_json(), R"({"input": "x", "answer": "ad"})" "\n");
  const tasks::Task task = tasks::Task::load(folder.path());
  testing::ScriptedEngine engine({
      {"gen\n", {"a\nb\n"}},
      {"val\na\n", {"v=9"}}, {"val\nb\n", {"v=1"}},
      {"gen\na\n", {"c\nd\n"}},
      {"val\na\nc\n", {"v=2"}}, {"val\na\nd\n", {"v=6"}},
      {"ans\na\nd\n", {"ad"}},
  });
  SearchConfig config;
  config.algorithm = "mcts";
  config.params.n = 2;
  config.params.depth = 2;
  config.params.simulations = 6;
  config.params.parallel = 2;
  config.params.c_puct = 1.0;
  config.params.selection = "puct";
  const SearchResult result = make_search(config)->solve(task, task.problems()[0], engine);

  // Round 1: both selections reach the unexpanded root: one expansion.
  //   a = 0.9, b = 0.1; priors 0.9, 0.1; backup max = 0.9 to the root.
  // Round 2: a scores 0.9 + 0.9 = 1.8 over b's 0.2; under a's virtual loss
  //   the second selection scores a 0.9 * sqrt(2) / 2 = 0.64 > b 0.24: a
  //   again, simulated once. a -> c = 0.2, d = 0.6; backup 0.6.
  // Round 3: root -> a (0.6 + 0.64 > 0.24) -> d (0.6 + 0.75 > c 0.2 + 0.25),
  //   terminal; the second selection, with d's virtual loss, takes c
  //   (0.2 + 0.25 * sqrt(2) = 0.55 > d 0.75 * sqrt(2) / 2 = 0.53). Both are
  //   terminal: no requests; backups 0.6 and 0.2.
  ASSERT_EQ(engine.batches().size(), 5u);
  EXPECT_EQ(engine.prompts(0), Prompts({"gen\n"}));
  EXPECT_EQ(engine.prompts(1), Prompts({"val\na\n", "val\nb\n"}));
  EXPECT_EQ(engine.prompts(2), Prompts({"gen\na\n"}));
  EXPECT_EQ(engine.prompts(3), Prompts({"val\na\nc\n", "val\na\nd\n"}));
  EXPECT_EQ(engine.prompts(4), Prompts({"ans\na\nd\n"}));
  // An expansion's requests carry the score that selected the leaf: the
  // root had no competitor; a won round 2 with 1.8.
  EXPECT_EQ(engine.batches()[0][0].priority, 0.0);
  EXPECT_NEAR(engine.batches()[2][0].priority, 1.8, 1e-9);

  const SearchTree& tree = result.tree;
  EXPECT_EQ(tree.node(0).visits, 4);
  EXPECT_NEAR(tree.node(0).value_sum, 0.9 + 0.6 + 0.6 + 0.2, 1e-9);
  EXPECT_EQ(tree.node(1).visits, 3);
  EXPECT_NEAR(tree.node(1).value_sum, 0.6 + 0.6 + 0.2, 1e-9);
  EXPECT_EQ(tree.node(2).visits, 0);
  EXPECT_EQ(tree.node(3).visits, 1);
  EXPECT_NEAR(tree.node(3).value_sum, 0.2, 1e-9);
  EXPECT_EQ(tree.node(4).visits, 1);
  EXPECT_NEAR(tree.node(4).prior, 0.75, 1e-9);
  EXPECT_EQ(tree.node(0).order, 0);
  EXPECT_EQ(tree.node(1).order, 1);
  EXPECT_FALSE(tree.node(2).expanded);
  EXPECT_EQ(tree.path(tree.chosen()), std::vector<int>({0, 1, 4}));  // best terminal value
  EXPECT_EQ(result.answer, "ad");
}

TEST(MctsSearch, UctTriesEveryChildBeforeRevisiting) {
  testing::TempTaskFolder folder(testing::toy_task_json(), R"({"input": "x", "answer": "b"})" "\n");
  const tasks::Task task = tasks::Task::load(folder.path());
  testing::ScriptedEngine engine({
      {"gen\n", {"a\nb\n"}}, {"val\na\n", {"v=9"}}, {"val\nb\n", {"v=1"}},
      {"ans\na\n", {"a"}},
  });
  SearchConfig config;
  config.algorithm = "mcts";
  config.params.n = 2;
  config.params.depth = 1;  // a and b are terminal
  config.params.simulations = 3;
  config.params.parallel = 1;
  config.params.selection = "uct";
  const SearchResult result = make_search(config)->solve(task, task.problems()[0], engine);
  // Round 1 expands the root; rounds 2 and 3 visit a (best unvisited), then b.
  EXPECT_EQ(result.tree.node(1).visits, 1);
  EXPECT_EQ(result.tree.node(2).visits, 1);
  EXPECT_EQ(result.tree.node(0).visits, 3);
  EXPECT_EQ(engine.batches().size(), 3u);  // gen, val, answer
  EXPECT_EQ(result.answer, "a");
}

TEST(MctsSearch, RolloutsContinueNewNodesOffTheTreeInBatches) {
  testing::TempTaskFolder folder(testing::toy_task_json(), R"({"input": "x", "answer": "b"})" "\n");
  const tasks::Task task = tasks::Task::load(folder.path());
  testing::ScriptedEngine engine({
      {"gen\n", {"a\nb\n"}}, {"val\na\n", {"v=9"}}, {"val\nb\n", {"v=1"}},
      {"gen\na\n", {"c\nd\n"}}, {"gen\nb\n", {"e\n"}},
      {"val\na\nc\n", {"v=1"}}, {"val\nb\ne\n", {"v=8"}},
      {"ans\na\n", {"a"}},
  });
  SearchConfig config;
  config.algorithm = "mcts";
  config.params.n = 2;
  config.params.depth = 2;
  config.params.simulations = 1;
  config.params.parallel = 1;
  config.params.rollout_depth = 1;
  const SearchResult result = make_search(config)->solve(task, task.problems()[0], engine);
  // Expansion, evaluation, then one rollout step for both children (first
  // thought only) and one evaluation of the rollouts' ends.
  ASSERT_EQ(engine.batches().size(), 5u);
  EXPECT_EQ(engine.prompts(2), Prompts({"gen\na\n", "gen\nb\n"}));
  EXPECT_EQ(engine.prompts(3), Prompts({"val\na\nc\n", "val\nb\ne\n"}));
  EXPECT_EQ(result.tree.size(), 3);  // rollouts stay off the tree
  // The backup takes the best rollout (b's 0.8), not the evaluations (a's 0.9).
  EXPECT_NEAR(result.tree.node(0).value_sum, 0.8, 1e-9);
  // No terminal node was reached: the answer comes from the end of the
  // most-visited path (a and b tie at 0 visits: the first).
  EXPECT_EQ(engine.prompts(4), Prompts({"ans\na\n"}));
}

}  // namespace
}  // namespace seed::search
