// `seed run --concurrency 4` under launch/mpirun.sh -n 3: rank 0 runs four
// searches at once against the coordinator, the target rank and the draft
// rank serve them all, and every problem's answer and tokens are what one
// process solving the problems one at a time writes (sampled, so this holds
// only if each request's draws are its own).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

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

class ConcurrencyMpirunTest : public ::testing::Test {
 protected:
  // Runs `seed run` (under `launcher`, if any) into dir_/name; returns its
  // exit status.
  int run(const std::string& launcher, const std::string& name, const std::string& extra) const {
    return seed::testing::zoo_run_logged(
        launcher, dir_, name,
        "--task " + std::string(SEED_SOURCE_DIR) + "/tasks/game24 --search bfs --engine seed-batch --limit 4 " + extra,
        400);
  }

  // Each problem's answer and token counts, by problem index.
  std::map<int64_t, json> results(const std::string& name) const {
    return seed::testing::result_fields(dir_ / name, {"answer", "tokens", "thought_tokens", "evaluation_tokens"});
  }

  seed::testing::Game24ScratchDir scratch_{"seed_concurrency_mpirun_test"};
  const fs::path& dir_ = scratch_.path();
};

TEST_F(ConcurrencyMpirunTest, FourProblemsAtOnceOverRanksWriteWhatOneProcessWritesOneAtATime) {
  ASSERT_EQ(run(std::string(SEED_SOURCE_DIR) + "/launch/mpirun.sh -n 3 -- ", "np3", "--concurrency 4"), 0)
      << "see " << (dir_ / "np3.log");
  ASSERT_EQ(run("", "serial", "--concurrency 1"), 0) << "see " << (dir_ / "serial.log");
  ASSERT_EQ(results("np3").size(), 4u);
  EXPECT_EQ(results("np3"), results("serial"));
  std::ifstream log(dir_ / "np3.log");
  const std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("concurrency: 4 problems in flight"), std::string::npos) << text;
}

}  // namespace
