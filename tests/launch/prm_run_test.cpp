// `seed run` on tasks/game24-prm, whose states the zoo's process reward
// model scores: the PRM runs on rank 0 beside the search, so under
// launch/mpirun.sh -n 3 the answers and tokens are one process's; the PRM's
// prefix cache changes what it computes, never the results; summary.json
// counts the PRM's tokens.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "tests/launch/synthetic_game24_csv.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

class PrmRunTest : public ::testing::Test {
 protected:
  // Runs DVTS with the seed-batch engine (under `launcher`, if any) into
  // dir_/name; returns its exit status.
  int run(const std::string& launcher, const std::string& name, const std::string& extra) const {
    const std::string src = SEED_SOURCE_DIR;
    const std::string command = "timeout -k 10 400 " + launcher + std::string(SEED_BINARY) + " --threads 1 run --task " +
                                src + "/tasks/game24-prm --target " + src + "/models/zoo/tiny-target --draft " + src +
                                "/models/zoo/tiny-draft --data " + (dir_ / "24.csv").string() +
                                " --search dvts --beams 4 --beam-width 2 --engine seed-batch --limit 2 --out " +
                                (dir_ / name).string() + " " + extra + " > " + (dir_ / (name + ".log")).string() +
                                " 2>&1";
    return std::system(command.c_str());
  }

  // Each problem's answer and token counts, by problem index.
  std::map<int64_t, json> results(const std::string& name) const {
    return seed::testing::result_fields(
        dir_ / name, {"answer", "tokens", "thought_tokens", "evaluation_tokens", "prm_scored_tokens"});
  }

  json summary(const std::string& name) const {
    std::ifstream in(dir_ / name / "summary.json");
    return json::parse(in);
  }

  seed::testing::Game24ScratchDir scratch_{"seed_prm_run_test"};
  const fs::path& dir_ = scratch_.path();
};

TEST_F(PrmRunTest, ThePrmOnRankZeroAndWithoutItsPrefixCacheGivesOneProcesssResults) {
  ASSERT_EQ(run("", "serial", "--concurrency 1"), 0) << "see " << (dir_ / "serial.log");
  ASSERT_EQ(run("", "uncached", "--concurrency 1 --no-prefix-cache"), 0) << "see " << (dir_ / "uncached.log");
  ASSERT_EQ(run(std::string(SEED_SOURCE_DIR) + "/launch/mpirun.sh -n 3 -- ", "np3", "--concurrency 2"), 0)
      << "see " << (dir_ / "np3.log");
  ASSERT_EQ(results("serial").size(), 2u);
  EXPECT_EQ(results("np3"), results("serial"));
  EXPECT_EQ(results("uncached"), results("serial"));

  // The target wrote no evaluations; the PRM scored every step once, and
  // its prefix cache spared it the steps before each new one.
  const json cached = summary("serial"), uncached = summary("uncached");
  for (const auto& [index, row] : results("serial")) EXPECT_EQ(row[3], 0) << "problem " << index;
  EXPECT_GT(cached["prm_scored_tokens"].get<int64_t>(), 0);
  EXPECT_EQ(uncached["prm_scored_tokens"], cached["prm_scored_tokens"]);
  EXPECT_LT(cached["prm_tokens"].get<int64_t>(), uncached["prm_tokens"].get<int64_t>());
}

}  // namespace
