// `seed run --concurrency N` on the zoo pair: the results lines (answer and
// tokens per index) of N = 1, 3 and 8 are the same, for a search of single
// chains and one of wide levels; a concurrent run killed after its first
// results and resumed ends with exactly the uninterrupted run's lines.
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
#include <map>
#include <string>
#include <thread>

#include "tests/launch/command_outcome.h"
#include "tests/launch/synthetic_game24_csv.h"
#include "tests/launch/zoo_seed_run.h"

extern char** environ;

namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using nlohmann::json;

constexpr int kProblems = 8;

// index -> (answer_text, tokens) of a run's results.jsonl, each index once.
std::map<int, std::pair<std::string, int64_t>> lines_of(const fs::path& results) {
  std::map<int, std::pair<std::string, int64_t>> out;
  for (const json& r : seed::testing::read_lines(results)) {
    const int index = r.at("index").get<int>();
    EXPECT_EQ(out.count(index), 0u) << "index " << index << " written twice";
    out[index] = {r.at("answer_text").get<std::string>(), r.at("tokens").get<int64_t>()};
  }
  return out;
}

class RunConcurrencyTest : public ::testing::Test {
 protected:
  // Runs into dir_/out (emptied first), then moves it to dir_/name.
  fs::path run(const std::string& search, const std::string& extra, const std::string& name) {
    fs::remove_all(dir_ / "out");
    const seed::testing::Outcome r =
        seed::testing::run_command(seed::testing::zoo_seed_run(dir_, search, kProblems, extra));
    EXPECT_EQ(r.exit_code, 0) << r.output;
    fs::rename(dir_ / "out", dir_ / name);
    return dir_ / name;
  }

  seed::testing::Game24ScratchDir scratch_{"seed_run_concurrency_test"};
  const fs::path& dir_ = scratch_.path();
};

TEST_F(RunConcurrencyTest, OneThreeAndEightProblemsInFlightWriteTheSameLines) {
  for (const std::string search : {"cot", "bfs --depth 1 --n 3 --b 2"}) {
    const auto serial = lines_of(run(search, "--concurrency 1", "c1") / "results.jsonl");
    ASSERT_EQ(serial.size(), static_cast<size_t>(kProblems)) << search;
    for (const char* n : {"3", "8"}) {
      const fs::path out = run(search, std::string("--concurrency ") + n, std::string("c") + n);
      EXPECT_EQ(lines_of(out / "results.jsonl"), serial) << search << " --concurrency " << n;
      const json summary = json::parse(std::ifstream(out / "summary.json"));
      EXPECT_EQ(summary.at("problems"), kProblems);
      EXPECT_GT(summary.at("wall_s").get<double>(), 0);
      EXPECT_EQ(summary.at("engine_invocation").at("concurrency"), std::stoi(n));
      EXPECT_GE(summary.at("engine_invocation").at("peak_sequences_per_forward").get<int64_t>(), 1);
    }
    fs::remove_all(dir_ / "c1");
    fs::remove_all(dir_ / "c3");
    fs::remove_all(dir_ / "c8");
  }
}

TEST_F(RunConcurrencyTest, AKilledConcurrentRunResumesToTheUninterruptedRunsLines) {
  const std::string search = "bfs --depth 1 --n 2 --b 1";
  const auto whole = lines_of(run(search, "--concurrency 3", "whole") / "results.jsonl");
  ASSERT_EQ(whole.size(), static_cast<size_t>(kProblems));
  fs::remove_all(dir_ / "out");
  const fs::path results = dir_ / "out" / "results.jsonl";
  const std::string command = "exec " + seed::testing::zoo_seed_run(dir_, search, kProblems, "--concurrency 3") +
                              " > " + (dir_ / "run.log").string() + " 2>&1";
  const char* argv[] = {"sh", "-c", command.c_str(), nullptr};
  pid_t pid;
  ASSERT_EQ(posix_spawn(&pid, "/bin/sh", nullptr, nullptr, const_cast<char**>(argv), environ), 0);
  const auto deadline = std::chrono::steady_clock::now() + 300s;  // only a hang reaches it
  const auto written = [&] {
    std::ifstream in(results);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  };
  while (written().find('\n') == std::string::npos && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(20ms);
  }
  kill(pid, SIGINT);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  const std::string text = written();
  ASSERT_LT(std::count(text.begin(), text.end(), '\n'), kProblems) << "finished before the signal";
  const seed::testing::Outcome resumed =
      seed::testing::run_command(seed::testing::zoo_seed_run(dir_, search, kProblems, "--concurrency 3 --resume"));
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  EXPECT_EQ(seed::testing::read_lines(results).size(), static_cast<size_t>(kProblems));
  EXPECT_EQ(lines_of(results), whole);
}

}  // namespace
