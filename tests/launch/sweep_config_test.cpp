// A sweep config expands to its points in grid order, and every mistake in
// it is an error that names the file and the key.
#include "launch/sweep_config.h"

#include <gtest/gtest.h>

#include <set>

#include "models/base/error.h"

namespace seed::launch {
namespace {

using nlohmann::json;

const std::set<std::string> kRunOptions = {"task",  "search", "engine", "limit",   "seed",        "n",
                                           "b",     "depth",  "samples", "beams",  "beam-width",  "simulations",
                                           "draft-length", "k-config", "no-prefix-cache", "out", "resume"};

SweepConfig expand(const json& config) {
  return expand_sweep_config(config, "sweep.json", [](const std::string& k) { return kRunOptions.count(k) > 0; });
}

// The message of the error `config` raises ("" when it expands).
std::string error_of(const json& config) {
  try {
    expand(config);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
    return e.what();
  }
  return "";
}

std::vector<std::string> slugs(const SweepConfig& c) {
  std::vector<std::string> out;
  for (const SweepPoint& p : c.points) out.push_back(p.slug);
  return out;
}

TEST(SweepConfigTest, TheSmallestConfigIsACartesianProductInGridOrder) {
  const SweepConfig c =
      expand(json::parse(R"({"task": "tasks/game24", "limit": 4, "grid": {"search": ["cot", "bfs"], "engine": ["ar", "seed"]}})"));
  EXPECT_EQ(slugs(c), (std::vector<std::string>{"search=cot_engine=ar", "search=cot_engine=seed",
                                                "search=bfs_engine=ar", "search=bfs_engine=seed"}));
  EXPECT_EQ(c.points[0].params, json::parse(R"({"task": "tasks/game24", "limit": 4, "search": "cot", "engine": "ar"})"));
  EXPECT_EQ(c.baseline, "ar");
}

TEST(SweepConfigTest, AListOfGridsJoinsTheirProductsAndDropsRepeatedPoints) {
  const SweepConfig c = expand(json::parse(R"({"task": "t", "grid": [
      {"search": "bfs", "b": [1, 2], "engine": "seed"},
      {"search": "bfs", "b": 1, "engine": ["seed", "ar"]},
      {"search": "best-of-n", "samples": [1, 4]}]})"));
  EXPECT_EQ(slugs(c), (std::vector<std::string>{"search=bfs_b=1_engine=seed", "search=bfs_b=2_engine=seed",
                                                "search=bfs_b=1_engine=ar", "search=best-of-n_samples=1",
                                                "search=best-of-n_samples=4"}));
}

TEST(SweepConfigTest, UnderscoresReadAsDashesAndRunArgsSpellFlags) {
  const SweepConfig c = expand(json::parse(
      R"({"task": "tasks/game24", "search": "dvts", "beam_width": 4, "k_config": [2, 2, 1], "no_prefix_cache": true,
          "grid": {"beams": [8]}})"));
  ASSERT_EQ(c.points.size(), 1u);
  EXPECT_EQ(c.points[0].slug, "beams=8");
  const std::vector<std::string> args = c.points[0].run_args();
  const std::vector<std::string> expected = {"--beam-width", "4", "--beams", "8", "--k-config", "2", "2", "1",
                                             "--no-prefix-cache", "--search", "dvts", "--task", "tasks/game24"};
  EXPECT_EQ(args, expected);
}

TEST(SweepConfigTest, SlugsAreFolderNames) {
  const SweepConfig c = expand(json::parse(R"({"grid": {"task": ["tasks/game24"], "k-config": [[2, 1]]}})"));
  EXPECT_EQ(c.points[0].slug, "task=game24_k-config=2-1");
}

TEST(SweepConfigTest, AnUnknownKeyIsNamed) {
  const std::string e = error_of(json::parse(R"({"task": "t", "grid": {"serch": ["bfs"]}})"));
  EXPECT_NE(e.find("sweep.json"), std::string::npos) << e;
  EXPECT_NE(e.find("'serch'"), std::string::npos) << e;
  EXPECT_NE(error_of(json::parse(R"({"task": "t", "temprature": 1})")).find("'temprature'"), std::string::npos);
}

TEST(SweepConfigTest, KeysTheSweepSetsItselfAreRefused) {
  EXPECT_NE(error_of(json::parse(R"({"task": "t", "out": "x"})")).find("'out'"), std::string::npos);
  EXPECT_NE(error_of(json::parse(R"({"task": "t", "grid": {"resume": [true]}})")).find("'resume'"), std::string::npos);
}

TEST(SweepConfigTest, AnEmptyListIsNamed) {
  const std::string e = error_of(json::parse(R"({"task": "t", "grid": {"search": ["bfs"], "engine": []}})"));
  EXPECT_NE(e.find("'engine'"), std::string::npos) << e;
  EXPECT_NE(e.find("empty"), std::string::npos) << e;
  EXPECT_NE(error_of(json::parse(R"({"task": "t", "grid": []})")).find("'grid'"), std::string::npos);
}

TEST(SweepConfigTest, AParameterTheSearchDoesNotTakeIsNamedWithTheSearch) {
  const std::string e = error_of(json::parse(R"({"task": "t", "grid": {"search": ["cot", "bfs"], "b": [1, 2]}})"));
  EXPECT_NE(e.find("'b'"), std::string::npos) << e;
  EXPECT_NE(e.find("'cot'"), std::string::npos) << e;
  const std::string m = error_of(json::parse(R"({"task": "t", "search": "mcts", "samples": 4})"));
  EXPECT_NE(m.find("'samples'"), std::string::npos) << m;
  EXPECT_EQ(error_of(json::parse(R"({"task": "t", "search": "mcts", "simulations": 8, "n": 3})")), "");
}

TEST(SweepConfigTest, AValueThatIsNotAnOptionValueIsNamed) {
  const std::string e = error_of(json::parse(R"({"task": "t", "grid": {"n": [{"a": 1}]}})"));
  EXPECT_NE(e.find("'n'"), std::string::npos) << e;
  EXPECT_NE(error_of(json::parse(R"({"grid": {"search": ["bfs"]}})")).find("'task'"), std::string::npos);
  EXPECT_NE(error_of(json::parse(R"({"task": "t", "baseline": 3})")).find("'baseline'"), std::string::npos);
}

TEST(SweepConfigTest, ShardsPartitionThePoints) {
  const SweepConfig c = expand(json::parse(R"({"task": "t", "grid": {"seed": [1, 2, 3, 4, 5]}})"));
  std::vector<std::string> joined;
  for (int i = 0; i < 2; ++i) {
    for (const SweepPoint& p : shard_points(c.points, i, 2)) joined.push_back(p.slug);
  }
  std::sort(joined.begin(), joined.end());
  std::vector<std::string> all = slugs(c);
  std::sort(all.begin(), all.end());
  EXPECT_EQ(joined, all);
  EXPECT_EQ(shard_points(c.points, 1, 2).size(), 2u);
  EXPECT_THROW(shard_points(c.points, 2, 2), Error);
}

}  // namespace
}  // namespace seed::launch
