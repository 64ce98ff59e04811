// `seed run` stopped by SIGINT (Ctrl-C) or SIGTERM (a job manager) after its
// first result: it says what is kept and how to finish, exits 130 or 143
// (launch/process_signals.h), and --resume completes the run with every
// problem once.
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <thread>

#include "tests/launch/command_outcome.h"
#include "tests/launch/synthetic_game24_csv.h"
#include "tests/launch/zoo_seed_run.h"

extern char** environ;

namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

constexpr int kProblems = 8;

std::string read_file(const fs::path& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

struct Interrupt {
  int signal;
  int exit_code;
  const char* name;
};

class RunInterruptTest : public ::testing::TestWithParam<Interrupt> {
 protected:
  std::string seed_run(const std::string& extra) const {
    return seed::testing::zoo_seed_run(dir_, "bfs --depth 1 --n 2 --b 1", kProblems, extra);
  }

  seed::testing::Game24ScratchDir scratch_{"seed_run_interrupt_test"};
  const fs::path& dir_ = scratch_.path();
};

TEST_P(RunInterruptTest, SaysWhatIsKeptExitsWithItsStatusAndTheRunResumes) {
  const fs::path results = dir_ / "out" / "results.jsonl";
  const std::string command = "exec " + seed_run("") + " > " + (dir_ / "run.log").string() + " 2>&1";
  const char* argv[] = {"sh", "-c", command.c_str(), nullptr};
  pid_t pid;
  ASSERT_EQ(posix_spawn(&pid, "/bin/sh", nullptr, nullptr, const_cast<char**>(argv), environ), 0);
  // Bounds only a hang reaches: the first result takes seconds.
  const auto deadline = std::chrono::steady_clock::now() + 300s;
  while (read_file(results).find('\n') == std::string::npos && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(20ms);
  }
  kill(pid, GetParam().signal);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  const std::string log = read_file(dir_ / "run.log");
  ASSERT_TRUE(WIFEXITED(status)) << log;
  EXPECT_EQ(WEXITSTATUS(status), GetParam().exit_code) << log;
  EXPECT_NE(log.find(std::string("interrupted by ") + GetParam().name + ": every finished problem is kept in " +
                     results.string() + "; finish the run with the same options and --resume"),
            std::string::npos)
      << log;
  const std::string written = read_file(results);  // the last line may be torn
  const size_t kept = static_cast<size_t>(std::count(written.begin(), written.end(), '\n'));
  ASSERT_LT(kept, static_cast<size_t>(kProblems)) << "the run finished before the signal; raise kProblems";

  const seed::testing::Outcome resumed = seed::testing::run_command(seed_run("--resume"));
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  EXPECT_NE(resumed.output.find(std::to_string(kept) + " already done"), std::string::npos) << resumed.output;
  std::set<int> indices;
  for (const auto& record : seed::testing::read_lines(results)) indices.insert(record.at("index").get<int>());
  EXPECT_EQ(indices.size(), static_cast<size_t>(kProblems));
  EXPECT_EQ(seed::testing::read_lines(results).size(), static_cast<size_t>(kProblems));
}

INSTANTIATE_TEST_SUITE_P(Signals, RunInterruptTest,
                         ::testing::Values(Interrupt{SIGINT, 130, "SIGINT"}, Interrupt{SIGTERM, 143, "SIGTERM"}),
                         [](const ::testing::TestParamInfo<Interrupt>& info) { return std::string(info.param.name); });

}  // namespace
