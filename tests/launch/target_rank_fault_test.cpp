// `seed run` under launch/mpirun.sh -n 3 --tp 1 when the target group's
// rank 1 fails after the first result is written (docs/architecture.md, "Ranks under mpirun"):
//   - killed (SIGKILL): Open MPI ends the job at once, naming rank 1;
//   - hung (SIGSTOP): rank 0 notices within --rank-timeout, names the
//     target group's rank 1 and ends the job with exit status 3.
// Either way the job exits non-zero, every line of results.jsonl is kept
// and valid, and a single-process `seed run --resume` finishes the run
// without redoing (or changing) the kept problems.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "tests/launch/synthetic_game24_csv.h"
#include "tests/launch/zoo_seed_run.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using namespace std::chrono_literals;

constexpr int kProblems = 16;
constexpr int kLostRanksExit = 3;  // launch/distributed.h
// Bounds that only a hang reaches: the job itself takes seconds.
constexpr int kJobTimeoutS = 240;
constexpr int kTimedOut = 124;  // timeout(1)'s status
constexpr auto kFirstResultWait = 180s;

std::vector<std::string> read_lines(const fs::path& path) {
  std::vector<std::string> lines;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) lines.push_back(line);
  return lines;
}

// Whole lines of results.jsonl so far (the last may be mid-write).
size_t complete_lines(const fs::path& path) {
  std::ifstream in(path);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
}

// The process whose environment holds both entries, or -1.
pid_t find_process(const std::string& marker, const std::string& rank) {
  for (const fs::directory_entry& entry : fs::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(entry.path() / "environ");
    std::string variable;
    bool has_marker = false, has_rank = false;
    while (std::getline(in, variable, '\0')) {
      has_marker = has_marker || variable == marker;
      has_rank = has_rank || variable == rank;
    }
    if (has_marker && has_rank) return static_cast<pid_t>(std::stol(name));
  }
  return -1;
}

class TargetRankFaultTest : public ::testing::Test {
 protected:
  std::string seed_run(const std::string& extra) const {
    return seed::testing::zoo_seed_run(dir_, "cot", kProblems, extra);
  }

  // Runs the job, sends `signal` to rank 1 once a result is written, and
  // returns the job's exit status; its output goes to job.log.
  int run_and_fail_rank_1(int signal, const std::string& extra) {
    const std::string marker = "SEED_TARGET_FAULT_TEST=" + std::to_string(getpid());
    const std::string command = marker + " timeout -k 10 " + std::to_string(kJobTimeoutS) + " " +
                                SEED_SOURCE_DIR + "/launch/mpirun.sh -n 3 -- " + seed_run("--tp 1 " + extra) + " > " +
                                (dir_ / "job.log").string() + " 2>&1; echo $?";
    FILE* job = popen(command.c_str(), "r");
    const fs::path results = dir_ / "out" / "results.jsonl";
    const auto deadline = std::chrono::steady_clock::now() + kFirstResultWait;
    while (complete_lines(results) == 0 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(20ms);
    }
    const pid_t rank_1 = find_process(marker, "OMPI_COMM_WORLD_RANK=1");
    EXPECT_GT(rank_1, 0) << "rank 1 not found; job log:\n" << log();
    if (rank_1 > 0) kill(rank_1, signal);
    std::array<char, 64> status{};
    const size_t n = fread(status.data(), 1, status.size() - 1, job);
    pclose(job);
    return std::stoi(std::string(status.data(), n));
  }

  std::string log() const {
    std::ifstream in(dir_ / "job.log");
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }

  // Every kept line is valid, and --resume completes the run around them.
  void expect_kept_and_resumed() {
    const fs::path results = dir_ / "out" / "results.jsonl";
    const std::vector<std::string> kept = read_lines(results);
    ASSERT_FALSE(kept.empty());
    ASSERT_LT(kept.size(), static_cast<size_t>(kProblems)) << "the run finished before the fault; raise kProblems";
    for (const std::string& line : kept) {
      json parsed;
      EXPECT_NO_THROW(parsed = json::parse(line)) << line;
    }

    FILE* resume = popen((seed_run("--resume") + " 2>&1").c_str(), "r");
    std::string output;
    std::array<char, 4096> buffer;
    size_t n;
    while ((n = fread(buffer.data(), 1, buffer.size(), resume)) > 0) output.append(buffer.data(), n);
    ASSERT_EQ(pclose(resume), 0) << output;
    EXPECT_NE(output.find(std::to_string(kept.size()) + " already done"), std::string::npos) << output;

    const std::vector<std::string> all = read_lines(results);
    ASSERT_EQ(all.size(), static_cast<size_t>(kProblems));
    for (size_t i = 0; i < kept.size(); ++i) EXPECT_EQ(all[i], kept[i]) << "kept line " << i << " changed";
    std::set<int> indices;
    for (const std::string& line : all) indices.insert(json::parse(line)["index"].get<int>());
    EXPECT_EQ(indices.size(), static_cast<size_t>(kProblems));
    EXPECT_EQ(*indices.rbegin(), kProblems - 1);
  }

  seed::testing::Game24ScratchDir scratch_{"seed_target_fault_test"};
  const fs::path& dir_ = scratch_.path();
};

TEST_F(TargetRankFaultTest, AKilledTargetRankEndsTheJobNamingItAndTheRunResumes) {
  const int status = run_and_fail_rank_1(SIGKILL, "");
  EXPECT_NE(status, 0) << log();
  EXPECT_NE(status, kTimedOut) << log();
  EXPECT_NE(log().find("rank 1"), std::string::npos) << log();
  expect_kept_and_resumed();
}

TEST_F(TargetRankFaultTest, AHungTargetRankIsNamedAfterTheRankTimeoutAndTheRunResumes) {
  const int status = run_and_fail_rank_1(SIGSTOP, "--rank-timeout 2000");
  EXPECT_EQ(status, kLostRanksExit) << log();
  const std::string output = log();
  EXPECT_NE(output.find("the target group (ranks 1..1) was lost"), std::string::npos) << output;
  EXPECT_NE(output.find("leader rank 1"), std::string::npos) << output;
  EXPECT_NE(output.find("--resume"), std::string::npos) << output;
  expect_kept_and_resumed();
}

}  // namespace
