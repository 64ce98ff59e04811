// ToT-BFS on the scripted engine: expansion order, batching, beam selection.
#include <gtest/gtest.h>

#include "search/search.h"
#include "tests/search/scripted_engine.h"
#include "tests/search/task_fixture.h"

namespace seed::search {
namespace {

using testing::ScriptedEngine;
using testing::TempTaskFolder;
using Prompts = std::vector<std::string>;

SearchConfig bfs_config(int n, int b, int depth) {
  SearchConfig config;
  config.algorithm = "bfs";
  config.params.n = n;
  config.params.b = b;
  config.params.depth = depth;
  return config;
}

TEST(BfsSearch, ExpandsTheBestStatesOfEachLevelInOneBatchPerStep) {
  TempTaskFolder folder(testing::toy_task_json(), R"({"input": "x", "answer": "be"})" "\n");
  const tasks::Task task = tasks::Task::load(folder.path());
  ScriptedEngine engine({
      {"gen\n", {"a\nb\nc\n"}},
      {"val\na\n", {"v=3"}}, {"val\nb\n", {"v=9"}}, {"val\nc\n", {"v=5"}},
      {"gen\nb\n", {"d\ne\n"}}, {"gen\nc\n", {"g\n"}},
      {"val\nb\nd\n", {"v=4"}}, {"val\nb\ne\n", {"v=8"}}, {"val\nc\ng\n", {"v=8"}},
      {"ans\nb\ne\n", {"be"}},
  });
  const SearchResult result = make_search(bfs_config(3, 2, 2))->solve(task, task.problems()[0], engine);

  ASSERT_EQ(engine.batches().size(), 5u);
  EXPECT_EQ(engine.prompts(0), Prompts({"gen\n"}));
  EXPECT_EQ(engine.prompts(1), Prompts({"val\na\n", "val\nb\n", "val\nc\n"}));
  EXPECT_EQ(engine.prompts(2), Prompts({"gen\nb\n", "gen\nc\n"}));  // by value: b (9) before c (5)
  EXPECT_EQ(engine.prompts(3), Prompts({"val\nb\nd\n", "val\nb\ne\n", "val\nc\ng\n"}));
  EXPECT_EQ(engine.prompts(4), Prompts({"ans\nb\ne\n"}));  // b/e and c/g tie at 8: the earlier node
  EXPECT_EQ(result.answer, "be");
  EXPECT_EQ(result.tree.path(result.tree.chosen()), std::vector<int>({0, 2, 5}));
  EXPECT_TRUE(task.checker().check(task.problems()[0], result.answer).correct);

  const SearchTree& tree = result.tree;
  EXPECT_EQ(tree.size(), 7);
  EXPECT_EQ(tree.node(0).order, 0);
  EXPECT_EQ(tree.node(2).order, 1);
  EXPECT_EQ(tree.node(3).order, 2);
  EXPECT_FALSE(tree.node(1).expanded);  // a (3) fell out of the beam
  EXPECT_TRUE(tree.node(5).kept && tree.node(6).kept);
  EXPECT_FALSE(tree.node(4).kept);
  EXPECT_EQ(result.usage.batches, 5);
  EXPECT_EQ(result.usage.requests, 10);
}

// Every search's solve() ends its problem's group once its last request is
// done, so that the drafters drop what they learned from it; a solve that
// fails ends it too.
TEST(BfsSearch, ASolveEndsItsProblemsGroupAfterItsLastRequestHoweverItEnds) {
  TempTaskFolder folder(testing::toy_task_json(),
                        R"({"input": "x", "answer": "a"})" "\n" R"({"input": "y", "answer": "a"})" "\n");
  const tasks::Task task = tasks::Task::load(folder.path());
  ScriptedEngine engine({
      {"gen\n", {"a\n"}}, {"val\na\n", {"v=3"}}, {"ans\na\n", {"a"}},
  });
  const std::unique_ptr<Search> bfs = make_search(bfs_config(1, 1, 1));
  bfs->solve(task, task.problems()[0], engine);
  ASSERT_EQ(engine.batches().size(), 3u);
  const uint64_t group = engine.batches()[0][0].group;
  for (const auto& batch : engine.batches()) {
    for (const spec::GenRequest& r : batch) EXPECT_EQ(r.group, group);
  }
  EXPECT_EQ(engine.ended(), (std::vector<ScriptedEngine::Ended>{{group, 3}}));

  ScriptedEngine failing({
      {"gen\n", {"a\n"}}, {"ans\na\n", {"a"}},  // no value for "a": the solve throws
  });
  EXPECT_THROW(bfs->solve(task, task.problems()[1], failing), Error);
  ASSERT_EQ(failing.batches().size(), 2u);
  const uint64_t other = failing.batches()[0][0].group;
  EXPECT_NE(other, group);
  EXPECT_EQ(failing.ended(), (std::vector<ScriptedEngine::Ended>{{other, 2}}));
}

TEST(BfsSearch, KeepsAFinalStateWithoutExpandingItAndDropsDuplicateThoughts) {
  TempTaskFolder folder(testing::toy_task_json(), R"({"input": "x", "answer": "z!"})" "\n");
  const tasks::Task task = tasks::Task::load(folder.path());
  ScriptedEngine engine({
      {"gen\n", {"a\nz!\na\n"}},
      {"val\na\n", {"v=2"}}, {"val\nz!\n", {"v=9"}},
      {"gen\na\n", {"q\n"}},
      {"val\na\nq\n", {"v=1"}},
      {"ans\nz!\n", {"z!"}},
  });
  const SearchResult result = make_search(bfs_config(5, 2, 2))->solve(task, task.problems()[0], engine);
  EXPECT_EQ(result.tree.node(0).children.size(), 2u);  // "a" once
  EXPECT_TRUE(result.tree.node(2).final);
  EXPECT_FALSE(result.tree.node(2).expanded);
  ASSERT_EQ(engine.batches().size(), 5u);
  EXPECT_EQ(engine.prompts(1), Prompts({"val\na\n", "val\nz!\n"}));
  EXPECT_EQ(engine.prompts(2), Prompts({"gen\na\n"}));
  EXPECT_EQ(result.answer, "z!");
}

TEST(BfsSearch, SameSeedSameRequestsAndProblemsGetDistinctStreams) {
  TempTaskFolder folder(testing::toy_task_json("sample"),
                        R"({"input": "x", "answer": "a"})" "\n" R"({"input": "y", "answer": "a"})" "\n");
  const tasks::Task task = tasks::Task::load(folder.path());
  const std::map<std::string, std::vector<std::string>> script = {
      {"gen\n", {"a", "b"}}, {"val\na\n", {"v=1"}}, {"val\nb\n", {"v=2"}}, {"ans\nb\n", {"b"}}};
  auto search = make_search(bfs_config(2, 1, 1));
  ScriptedEngine first(script), second(script), other(script);
  search->solve(task, task.problems()[0], first);
  search->solve(task, task.problems()[0], second);
  search->solve(task, task.problems()[1], other);
  ASSERT_EQ(first.batches().size(), second.batches().size());
  for (size_t b = 0; b < first.batches().size(); ++b) {
    for (size_t r = 0; r < first.batches()[b].size(); ++r) {
      EXPECT_EQ(first.batches()[b][r].seed, second.batches()[b][r].seed);
      EXPECT_EQ(first.batches()[b][r].stream, second.batches()[b][r].stream);
    }
  }
  // Sample mode: two samples of one prompt use two streams.
  ASSERT_EQ(first.batches()[0].size(), 2u);
  EXPECT_NE(first.batches()[0][0].stream, first.batches()[0][1].stream);
  EXPECT_NE(first.batches()[0][0].seed, other.batches()[0][0].seed);
}

TEST(BfsSearch, VoteEvaluationAsksOncePerParentAndScoresVoteShares) {
  nlohmann::json j = testing::toy_task_json();
  j["evaluate"] = {{"mode", "vote"}, {"prompt", "vote {steps}|{choices}"}, {"samples", 2}, {"temperature", 0}};
  TempTaskFolder folder(j, R"({"input": "x", "answer": "b"})" "\n");
  const tasks::Task task = tasks::Task::load(folder.path());
  ScriptedEngine engine({
      {"gen\n", {"a\nb\n"}},
      {"vote |Choice 1:\na\nChoice 2:\nb\n", {"The best choice is 2", "best choice is 2, not 1"}},
      {"ans\nb\n", {"b"}},
  });
  const SearchResult result = make_search(bfs_config(2, 1, 1))->solve(task, task.problems()[0], engine);
  ASSERT_EQ(engine.batches().size(), 3u);
  EXPECT_EQ(engine.batches()[1].size(), 2u);  // one prompt, two samples
  EXPECT_EQ(result.tree.node(1).value, 0.0);
  EXPECT_EQ(result.tree.node(2).value, 1.0);
  EXPECT_EQ(result.answer, "b");
}

}  // namespace
}  // namespace seed::search
