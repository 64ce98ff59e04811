// `seed run` end to end on the shipped zoo pair and the game24 task folder:
// output files, --resume, --tree-out, and answers that do not depend on the
// engine (greedy decoding: ar and seed must agree).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "tests/launch/synthetic_game24_csv.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct Outcome {
  int exit_code = 0;
  std::string output;
};

Outcome run_command(const std::string& command) {
  Outcome result;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  std::array<char, 4096> buffer;
  size_t n;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) result.output.append(buffer.data(), n);
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

std::vector<json> read_lines(const fs::path& path) {
  std::vector<json> lines;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) lines.push_back(json::parse(line));
  return lines;
}

class RunCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    out_ = fs::temp_directory_path() / ("seed_run_test_" + std::to_string(getpid()));
    fs::remove_all(out_);
    fs::create_directories(out_);
    csv_ = out_ / "24.csv";
    seed::testing::write_synthetic_game24_csv(csv_);
  }
  void TearDown() override { fs::remove_all(out_); }
  // A small greedy ToT-BFS: one proposal step, two thoughts, one kept.
  std::string seed_run(const std::string& engine, const std::string& out, const std::string& extra) const {
    const std::string src = SEED_SOURCE_DIR;
    return std::string(SEED_BINARY) + " --threads 1 --log-level warn run --task " + src + "/tasks/game24" +
           " --target " + src + "/models/zoo/tiny-target --draft " + src + "/models/zoo/tiny-draft" +
           " --data " + csv_.string() + " --search bfs --depth 1 --n 2 --b 1 --engine " + engine + " --out " + out +
           " " + extra;
  }
  fs::path out_;
  fs::path csv_;
};

TEST_F(RunCliTest, WritesOneLinePerProblemAndASummary) {
  const Outcome r = run_command(seed_run("ar", (out_ / "a").string(), "--limit 2 --tree-out " +
                                                                           (out_ / "tree.json").string()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::vector<json> lines = read_lines(out_ / "a" / "results.jsonl");
  ASSERT_EQ(lines.size(), 2u);
  for (const char* key : {"problem", "answer", "correct", "tree", "tokens", "target_forwards", "alpha", "wall_s"}) {
    EXPECT_TRUE(lines[0].contains(key)) << key;
  }
  EXPECT_EQ(lines[0]["problem"]["input"], "4 5 6 10");  // row 900, the first test puzzle
  std::ifstream summary_file(out_ / "a" / "summary.json");
  const json summary = json::parse(summary_file);
  for (const char* key : {"task", "search", "engine", "problems", "correct", "accuracy", "tokens", "tokens_per_s",
                          "wall_s"}) {
    EXPECT_TRUE(summary.contains(key)) << key;
  }
  EXPECT_EQ(summary["problems"], 2);
  EXPECT_NE(r.output.find("accuracy"), std::string::npos) << r.output;
  std::ifstream tree_file(out_ / "tree.json");
  const json trees = json::parse(tree_file);
  ASSERT_EQ(trees["problems"].size(), 2u);
  EXPECT_EQ(trees["problems"][0]["tree"]["chosen_path"].size(), 2u);  // root and one thought
}

TEST_F(RunCliTest, ResumeComputesOnlyTheMissingProblemsAndRefusesOtherSettings) {
  const std::string out = (out_ / "r").string();
  ASSERT_EQ(run_command(seed_run("ar", out, "--limit 1")).exit_code, 0);
  // A torn last line, as an interrupted write leaves it, is dropped and redone.
  { std::ofstream(out_ / "r" / "results.jsonl", std::ios::app) << R"({"index": 1, "answ)"; }
  const Outcome again = run_command(seed_run("ar", out, "--limit 2"));
  EXPECT_EQ(again.exit_code, 1);
  EXPECT_NE(again.output.find("--resume"), std::string::npos) << again.output;
  const Outcome resumed = run_command(seed_run("ar", out, "--limit 2 --resume"));
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  const std::vector<json> lines = read_lines(out_ / "r" / "results.jsonl");
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0]["index"], 0);
  EXPECT_EQ(lines[1]["index"], 1);
  const Outcome other = run_command(seed_run("ar", out, "--limit 2 --resume --seed 9"));
  EXPECT_EQ(other.exit_code, 1);
  EXPECT_NE(other.output.find("'seed'"), std::string::npos) << other.output;
}

TEST_F(RunCliTest, SpeculationNeverChangesGreedyAnswers) {
  const std::string ar = (out_ / "ar").string(), seed = (out_ / "seed").string();
  ASSERT_EQ(run_command(seed_run("ar", ar, "--limit 2")).exit_code, 0);
  const Outcome r = run_command(seed_run("seed", seed, "--limit 2 --baseline " + ar));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::vector<json> a = read_lines(out_ / "ar" / "results.jsonl"), s = read_lines(out_ / "seed" / "results.jsonl");
  ASSERT_EQ(a.size(), s.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i]["answer_text"], s[i]["answer_text"]) << i;
  EXPECT_NE(r.output.find("identical answers: 2 of 2"), std::string::npos) << r.output;
}

TEST_F(RunCliTest, ATaskJsonErrorNamesTheFileAndField) {
  fs::create_directories(out_ / "bad");
  std::ofstream(out_ / "bad" / "task.json") << R"({"name": "bad", "dat": {}})";
  const Outcome r = run_command(std::string(SEED_BINARY) + " run --task " + (out_ / "bad").string());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("task.json"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("'data'"), std::string::npos) << r.output;
}

}  // namespace
