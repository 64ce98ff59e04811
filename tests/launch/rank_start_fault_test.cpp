// `seed run` under launch/mpirun.sh -n 3 when one rank stops (SIGSTOP)
// before it starts MPI: the other ranks wait in MPI_Init or the barrier
// after it, where no message of the job reaches them. Within 10 x
// --rank-timeout (a little longer on ranks other than 0) a running rank
// says so and ends the job with exit status 3 (launch/distributed.h,
// start_mpi); without the bound the job waited for ever. And when a target
// group rank stops after that barrier, as it starts making the group's
// communicator (stop_making_group.cpp, preloaded): only its group waits
// for it, and rank 0's wait for the group to serve ends the job; made by a
// split over every rank, the group had kept them all waiting.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "tests/launch/synthetic_game24_csv.h"
#include "tests/launch/zoo_seed_run.h"

namespace {

namespace fs = std::filesystem;

constexpr int kLostRanksExit = 3;  // launch/distributed.h
constexpr int kJobTimeoutS = 120;  // only a hang reaches it: the job ends in seconds
constexpr int kTimedOut = 124;     // timeout(1)'s status

class RankStartFaultTest : public ::testing::Test {
 protected:
  // Runs the job with world rank `stopped` stopping itself before it execs
  // seed; returns the job's exit status, its output in job.log.
  int run_with_rank_stopped(int stopped) {
    return run_job("sh -c 'if [ \"$OMPI_COMM_WORLD_RANK\" = " + std::to_string(stopped) +
                       " ]; then kill -STOP $$; fi; exec \"$@\"' stopped-rank ",
                   "");
  }

  // Runs the job with a target group of ranks 1 and 2, world rank `stopped`
  // stopping itself as it starts making a communicator.
  int run_with_group_rank_stopped(int stopped) {
    return run_job("env LD_PRELOAD=" + std::string(SEED_STOP_MAKING_GROUP) +
                       " SEED_TEST_STOP_RANK=" + std::to_string(stopped) + " ",
                   " --tp 2");
  }

  // `seed run` under launch/mpirun.sh -n 3, each rank started through
  // `prefix`: the job's exit status, its output in job.log.
  int run_job(const std::string& prefix, const std::string& extra) {
    const std::string command =
        "timeout -k 10 " + std::to_string(kJobTimeoutS) + " " + SEED_SOURCE_DIR + "/launch/mpirun.sh -n 3 -- " +
        prefix + seed::testing::zoo_seed_run(dir_, "cot", 4, "--rank-timeout 200" + extra) + " > " +
        (dir_ / "job.log").string() + " 2>&1";
    const int status = std::system(command.c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

  std::string log() const {
    std::ifstream in(dir_ / "job.log");
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }

  // The job ended from a rank that saw the stop, with kLostRanksExit and
  // `message`, before any result was written.
  void expect_ended_before_any_result(int status, const std::string& message) {
    ASSERT_NE(status, kTimedOut) << log();
    EXPECT_EQ(status, kLostRanksExit) << log();
    EXPECT_NE(log().find(message), std::string::npos) << log();
    EXPECT_FALSE(fs::exists(dir_ / "out" / "results.jsonl"));
  }

  seed::testing::Game24ScratchDir scratch_{"seed_rank_start_fault_test"};
  const fs::path& dir_ = scratch_.path();
};

TEST_F(RankStartFaultTest, ADraftRankStoppedBeforeMpiStartsEndsTheJobFromRankZero) {
  expect_ended_before_any_result(
      run_with_rank_stopped(1), "rank 0: the job's 3 ranks did not all start within 2.0 s (10 x --rank-timeout 200 ms)");
}

TEST_F(RankStartFaultTest, RankZeroStoppedBeforeMpiStartsEndsTheJobFromAnotherRank) {
  const int status = run_with_rank_stopped(0);
  ASSERT_NE(status, kTimedOut) << log();
  EXPECT_EQ(status, kLostRanksExit) << log();
  const std::string output = log();
  EXPECT_TRUE(output.find("rank 1: the job's 3 ranks did not all start") != std::string::npos ||
              output.find("rank 2: the job's 3 ranks did not all start") != std::string::npos)
      << output;
  EXPECT_EQ(output.find("rank 0: the job's"), std::string::npos) << output;
}

TEST_F(RankStartFaultTest, ATargetGroupRankStoppedBeforeItsGroupFormsEndsTheJobFromRankZero) {
  expect_ended_before_any_result(
      run_with_group_rank_stopped(2),
      "the target group (ranks 1..2) did not start serving within 10 x --rank-timeout 200 ms");
}

}  // namespace
