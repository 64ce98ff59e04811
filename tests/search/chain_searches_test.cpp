// The chain-of-thought baselines on the scripted engine: cot, best-of-n,
// weighted-best-of-n, self-consistency; and what every search checks of a
// task before it runs.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "search/search.h"
#include "search/search_parameters.h"
#include "tests/search/scripted_engine.h"
#include "tests/search/task_fixture.h"
#include "tests/throws_error.h"

namespace seed::search {
namespace {

using Prompts = std::vector<std::string>;

SearchResult run(const std::string& algorithm, int samples, testing::ScriptedEngine& engine,
                 const std::string& answer, bool early_stop = true) {
  testing::TempTaskFolder folder(testing::toy_task_json(),
                                 nlohmann::json{{"input", "x"}, {"answer", answer}}.dump() + "\n");
  const tasks::Task task = tasks::Task::load(folder.path());
  SearchConfig config;
  config.algorithm = algorithm;
  config.params.samples = samples;
  config.params.early_stop = early_stop;
  return make_search(config)->solve(task, task.problems()[0], engine);
}

TEST(ChainSearches, CotSamplesOneChainAndAnswersWithIt) {
  testing::ScriptedEngine engine(std::map<std::string, std::vector<std::string>>{{"cot x", {"p\nq"}}});
  const SearchResult result = run("cot", 5, engine, "p\nq");
  ASSERT_EQ(engine.batches().size(), 1u);
  EXPECT_EQ(engine.prompts(0), Prompts({"cot x"}));
  EXPECT_EQ(result.answer, "p\nq");
  EXPECT_EQ(result.tree.size(), 2);
}

TEST(ChainSearches, BestOfNScoresEveryChainInOneBatchAndTakesTheBest) {
  testing::ScriptedEngine engine({
      {"cot x", {"p\nq", "r", "s\nt"}},
      {"val\np\nq\n", {"v=2"}}, {"val\nr\n", {"v=7"}}, {"val\ns\nt\n", {"v=7"}},
  });
  const SearchResult result = run("best-of-n", 3, engine, "r");
  ASSERT_EQ(engine.batches().size(), 2u);
  EXPECT_EQ(engine.prompts(0), Prompts({"cot x", "cot x", "cot x"}));
  EXPECT_EQ(engine.prompts(1), Prompts({"val\np\nq\n", "val\nr\n", "val\ns\nt\n"}));
  EXPECT_EQ(result.answer, "r");  // ties with s/t: the earlier chain
}

TEST(ChainSearches, SelfConsistencyTakesTheMajorityAndBreaksTiesByFirstReached) {
  testing::ScriptedEngine engine(std::map<std::string, std::vector<std::string>>{{"cot x", {"x", "y", "y", "x", " "}}});
  const SearchResult result = run("self-consistency", 5, engine, "y");
  ASSERT_EQ(engine.batches().size(), 1u);
  EXPECT_EQ(result.answer, "y");  // y reaches 2 votes first; x's second vote only ties
  EXPECT_EQ(result.tree.node(1).value, 2.0);
  EXPECT_FALSE(result.tree.node(5).value.has_value());  // no answer, no vote
}

// Once five of eight chains agree, the other three cannot change the
// majority: they are cancelled, and the answer is the full vote's.
TEST(ChainSearches, SelfConsistencyStopsOnceTheMajorityIsDecided) {
  const std::map<std::string, std::vector<std::string>> script = {{"cot x", {"a", "a", "b", "a", "a", "a", "b", "b"}}};
  testing::ScriptedEngine early(script), full(script);
  const SearchResult stopped = run("self-consistency", 8, early, "a");
  const SearchResult voted = run("self-consistency", 8, full, "a", /*early_stop=*/false);
  EXPECT_EQ(stopped.answer, voted.answer);
  EXPECT_EQ(stopped.answer, "a");
  EXPECT_EQ(voted.tree.size(), 1 + 8);
  EXPECT_EQ(stopped.tree.size(), 1 + 6);  // decided at the sixth chain: 5 > 1 + 2 left
  EXPECT_LT(stopped.usage.generated_tokens, voted.usage.generated_tokens);
}

TEST(ChainSearches, BestOfNScoresEachChainByTheChainPrompt) {
  nlohmann::json j = testing::two_stage_task_json();
  j["evaluate"]["chain_prompt"] = "whole {chain}";
  testing::TempTaskFolder folder(j, nlohmann::json{{"input", "x"}, {"answer", "r"}}.dump() + "\n");
  const tasks::Task task = tasks::Task::load(folder.path());
  for (const std::string algorithm : {"best-of-n", "weighted-best-of-n"}) {
    testing::ScriptedEngine engine({{"cot x", {"p\nq", "r"}}, {"whole p\nq", {"v=2"}}, {"whole r", {"v=7"}}});
    SearchConfig config;
    config.algorithm = algorithm;
    config.params.samples = 2;
    const SearchResult result = make_search(config)->solve(task, task.problems()[0], engine);
    ASSERT_EQ(engine.batches().size(), 2u) << algorithm;
    EXPECT_EQ(engine.prompts(1), Prompts({"whole p\nq", "whole r"})) << algorithm;
    EXPECT_EQ(result.answer, "r") << algorithm;
  }
}

// Caught before the first request: a run over many problems would
// otherwise fail only once its first chains were written.
TEST(ChainSearches, SearchesRefuseATaskLackingWhatTheyNeedBeforeAnyRequest) {
  const std::string data = nlohmann::json{{"input", "x"}, {"answer", "r"}}.dump() + "\n";
  testing::TempTaskFolder staged(testing::two_stage_task_json(), data);
  nlohmann::json j = testing::toy_task_json();
  j.erase("cot");
  testing::TempTaskFolder no_cot(j, data);
  const tasks::Task staged_task = tasks::Task::load(staged.path()), no_cot_task = tasks::Task::load(no_cot.path());
  for (const std::string algorithm : {"best-of-n", "weighted-best-of-n"}) {
    SearchConfig config;
    config.algorithm = algorithm;
    testing::ScriptedEngine engine(std::map<std::string, std::vector<std::string>>{});
    const auto solve = [&] { make_search(config)->solve(staged_task, staged_task.problems()[0], engine); };
    const std::vector<std::string> named = {staged.task_json(), algorithm, "'evaluate.prompt'", "{sub_answer}",
                                            "chain_prompt"};
    EXPECT_TRUE(testing::throws_error(solve, ErrorKind::kInvalidArgument, named));
    EXPECT_TRUE(engine.batches().empty()) << algorithm;
  }
  for (const std::string algorithm : {"cot", "best-of-n", "weighted-best-of-n", "self-consistency"}) {
    SearchConfig config;
    config.algorithm = algorithm;
    EXPECT_TRUE(testing::throws_error([&] { make_search(config)->check(no_cot_task); }, ErrorKind::kInvalidArgument,
                                      {no_cot.path(), "'cot'", algorithm}));
  }
  for (const std::string algorithm : {"cot", "self-consistency", "bfs", "dvts", "mcts"}) {
    SearchConfig config;
    config.algorithm = algorithm;
    EXPECT_NO_THROW(make_search(config)->check(staged_task)) << algorithm;  // none scores a chain
  }
}

TEST(ChainSearches, EachSearchSaysHowManyRequestsOneStepSends) {
  SearchConfig config;
  config.params.n = 3;
  config.params.b = 2;
  config.params.samples = 7;
  config.params.beams = 12;
  config.params.beam_width = 4;
  config.params.parallel = 5;
  const std::map<std::string, int> expected = {{"cot", 1},  {"best-of-n", 7}, {"weighted-best-of-n", 7},
                                               {"self-consistency", 7}, {"bfs", 6}, {"dvts", 12}, {"mcts", 5}};
  for (const std::string& algorithm : search_names()) {
    config.algorithm = algorithm;
    EXPECT_EQ(make_search(config)->requests_per_step(), expected.at(algorithm)) << algorithm;
  }
}

// `seed run` and `seed sweep` refuse a parameter by this table: it must
// name every algorithm, and take both spellings of a parameter.
TEST(ChainSearches, TheParameterTableNamesEveryAlgorithm) {
  std::vector<std::string> tabled;
  for (const auto& [algorithm, parameters] : parameters_by_search()) tabled.push_back(algorithm);
  std::vector<std::string> names = search_names();
  std::sort(names.begin(), names.end());
  EXPECT_EQ(tabled, names);
  EXPECT_TRUE(search_reads("dvts", "beam-width"));
  EXPECT_TRUE(search_reads("dvts", "beam_width"));
  EXPECT_FALSE(search_reads("cot", "depth"));
  EXPECT_FALSE(search_reads("beam", "depth"));
  EXPECT_TRUE(is_search_parameter("early-stop"));
  EXPECT_FALSE(is_search_parameter("engine"));
}

TEST(ChainSearches, UnknownAlgorithmListsTheKnownOnes) {
  SearchConfig config;
  config.algorithm = "beam";
  try {
    make_search(config);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("bfs, dvts, mcts"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace seed::search
