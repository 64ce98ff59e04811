// `seed run --lookahead` under launch/mpirun.sh (draft ranks serve the token
// drafts of the target's steps; with -n 4 --tp 2 the target is tensor
// parallel): greedy with the exact step verifier, a BFS search writes what
// one process writes and what `ar` writes; sampled chains of thought, drafted
// asynchronously with two alternatives per step, write what one synchronous
// process writes.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/launch/synthetic_game24_csv.h"
#include "tests/launch/zoo_seed_run.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

class LookaheadMpirunTest : public ::testing::Test {
 protected:
  // Runs `seed run` (under `launcher`, if any) into dir_/name; returns its
  // exit status.
  int run(const std::string& launcher, const std::string& name, const std::string& extra,
          const std::string& search = "bfs") const {
    return seed::testing::zoo_run_logged(
        launcher, dir_, name,
        "--task " + std::string(SEED_SOURCE_DIR) + "/tasks/game24 --search " + search + " --limit 1 " + extra, 300);
  }

  // Each problem's answer and token counts.
  std::vector<json> results(const std::string& name) const {
    std::vector<json> out;
    std::ifstream in(dir_ / name / "results.jsonl");
    std::string line;
    while (std::getline(in, line)) {
      const json row = json::parse(line);
      out.push_back({row["answer"], row["tokens"], row["thought_tokens"], row["evaluation_tokens"]});
    }
    return out;
  }

  json summary(const std::string& name) const { return seed::testing::run_summary(dir_ / name); }

  seed::testing::Game24ScratchDir scratch_{"seed_lookahead_mpirun_test"};
  const fs::path& dir_ = scratch_.path();
};

TEST_F(LookaheadMpirunTest, GreedyExactLookaheadWritesWhatOneProcessAndArWrite) {
  const std::string lookahead = "--engine seed --lookahead 2 --step-verifier exact";
  ASSERT_EQ(run(std::string(SEED_SOURCE_DIR) + "/launch/mpirun.sh -n 3 -- ", "np3", lookahead), 0)
      << "see " << (dir_ / "np3.log");
  ASSERT_EQ(run("", "np1", lookahead), 0);
  ASSERT_EQ(run("", "ar", "--engine ar"), 0);
  ASSERT_EQ(results("np3").size(), 1u);
  EXPECT_EQ(results("np3"), results("np1"));
  EXPECT_EQ(results("np3"), results("ar"));
  const json steps = summary("np3")["steps"];
  EXPECT_GT(steps["drafted_steps"].get<int64_t>(), 0) << steps.dump();
  EXPECT_EQ(summary("np3")["lookahead"]["gamma"], 2);
}

TEST_F(LookaheadMpirunTest, SampledAsyncLookaheadWithWidthWritesWhatOneSynchronousProcessWrites) {
  // cot samples at T = 0.7; every step's draws are keyed by its position, so
  // timing (async rounds, ranks) cannot change what is committed.
  const std::string lookahead = "--engine seed --lookahead 2 --lookahead-width 2 --step-verifier game24";
  const std::string launcher = std::string(SEED_SOURCE_DIR) + "/launch/mpirun.sh ";
  ASSERT_EQ(run(launcher + "-n 3 -- ", "np3", lookahead + " --lookahead-async", "cot"), 0)
      << "see " << (dir_ / "np3.log");
  ASSERT_EQ(run(launcher + "-n 4 -- ", "np4", lookahead + " --lookahead-async --tp 2", "cot"), 0)
      << "see " << (dir_ / "np4.log");
  ASSERT_EQ(run("", "np1", lookahead, "cot"), 0);
  ASSERT_EQ(results("np1").size(), 1u);
  EXPECT_EQ(results("np3"), results("np1"));
  EXPECT_EQ(results("np4"), results("np1"));
  EXPECT_EQ(summary("np3")["lookahead"]["async"], true);
  EXPECT_EQ(summary("np4")["lookahead"]["width"], 2);
  EXPECT_EQ(summary("np3")["steps"]["accepted_steps"], summary("np1")["steps"]["accepted_steps"]);
}

}  // namespace
