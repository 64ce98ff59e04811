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
#include "tests/launch/zoo_seed_run.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

class PrmRunTest : public ::testing::Test {
 protected:
  // Runs DVTS with the seed-batch engine (under `launcher`, if any) into
  // dir_/name; returns its exit status.
  int run(const std::string& launcher, const std::string& name, const std::string& extra) const {
    return seed::testing::zoo_run_logged(launcher, dir_, name,
                                         "--task " + std::string(SEED_SOURCE_DIR) + "/tasks/game24-prm --search dvts "
                                             "--beams 4 --beam-width 2 --engine seed-batch --limit 2 " + extra,
                                         400);
  }

  // Each problem's answer and token counts, by problem index.
  std::map<int64_t, json> results(const std::string& name) const {
    return seed::testing::result_fields(
        dir_ / name, {"answer", "tokens", "thought_tokens", "evaluation_tokens", "prm_scored_tokens"});
  }

  json summary(const std::string& name) const { return seed::testing::run_summary(dir_ / name); }

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
