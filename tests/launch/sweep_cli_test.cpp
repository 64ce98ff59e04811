// `seed sweep` and `seed report` end to end on the zoo pair: a sweep killed
// with SIGKILL and rerun ends with every point once and the results of an
// uninterrupted sweep; two shards give the unsharded sweep's points; a
// point reuses the target and PRM of the point before it and writes what
// its own `seed run` writes; a changed config is refused; under mpirun the
// points give the single-process results, and a target group's and a draft
// rank's models load once; the report renders in headless Chromium.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <string>
#include <thread>

#include "tests/launch/command_outcome.h"
#include "tests/launch/synthetic_game24_csv.h"

namespace {

namespace fs = std::filesystem;
using seed::testing::Outcome;
using seed::testing::read_lines;
using seed::testing::run_command;
using nlohmann::json;

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// How often `text` holds `part`.
size_t occurrences(const std::string& text, const std::string& part) {
  size_t count = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++count;
  return count;
}

// A row without the figures that depend on wall time (greedy drafts are as
// long as measured times make pay), on what the prefix cache held, or on
// which problems shared a target forward.
json computed_part(json row) {
  for (const char* key : {"wall_s", "tokens_per_s", "speedup", "prefill_tokens", "target_forwards", "tau", "alpha"}) {
    row.erase(key);
  }
  return row;
}

// A results line without its timing, which invocation wrote it, the
// forwards its requests took part in (problems in flight share them), the
// prompt tokens the target computed (they depend on what its prefix cache
// held: a resumed point starts with an empty cache) and what speculation
// did (greedy drafts are as long as measured times make pay).
json answer_part(json line) {
  for (const char* key : {"wall_s", "draft_s", "finished_s", "invocation", "target_forwards", "prefill_tokens",
                          "accepted_tokens", "alpha", "drafted_tokens", "rejections", "sequence_forwards"}) {
    line.erase(key);
  }
  return line;
}

class SweepCliTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = fs::temp_directory_path() / ("seed_sweep_test_" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    seed::testing::write_synthetic_game24_csv(dir_ / "24.csv");
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }

  // A 2 x 2 sweep (cot and a one-step greedy ToT-BFS; ar and seed) on the
  // first `limit` puzzles, written as DIR/NAME.json.
  static fs::path write_config(const std::string& name, int limit) {
    const std::string src = SEED_SOURCE_DIR;
    const json config = {{"task", src + "/tasks/game24"},
                         {"data", (dir_ / "24.csv").string()},
                         {"target", src + "/models/zoo/tiny-target"},
                         {"draft", src + "/models/zoo/tiny-draft"},
                         {"limit", limit},
                         {"grid", json::array({{{"search", "cot"}, {"engine", {"ar", "seed"}}},
                                               {{"search", "bfs"}, {"depth", 1}, {"n", 2}, {"b", 1},
                                                {"engine", {"ar", "seed"}}}})}};
    const fs::path path = dir_ / (name + ".json");
    std::ofstream(path) << config.dump(2);
    return path;
  }
  static std::string sweep_command(const fs::path& config, const fs::path& out, const std::string& extra = "") {
    return std::string(SEED_BINARY) + " --threads 1 --log-level warn sweep --config " + config.string() + " --out " +
           out.string() + " " + extra;
  }
  static fs::path dir_;
};

fs::path SweepCliTest::dir_;

TEST_F(SweepCliTest, AKilledSweepRerunFinishesWithTheUninterruptedResults) {
  const fs::path config = write_config("kill", 10);
  const Outcome whole = run_command(sweep_command(config, dir_ / "whole"));
  ASSERT_EQ(whole.exit_code, 0) << whole.output;
  const std::vector<json> expected = read_lines(dir_ / "whole" / "sweep.jsonl");
  ASSERT_EQ(expected.size(), 4u);
  EXPECT_EQ(expected[1]["params"]["engine"], "seed");
  EXPECT_TRUE(expected[1]["speedup"].is_number()) << expected[1];

  // Kill the sweep once the second point has written some of its problems.
  const fs::path out = dir_ / "killed";
  const pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);
    execl("/bin/sh", "sh", "-c", (sweep_command(config, out) + " >/dev/null 2>&1").c_str(), nullptr);
    _exit(127);
  }
  const fs::path second = out / expected[1]["slug"].get<std::string>() / "results.jsonl";
  while (read_lines(second).size() < 2) {
    ASSERT_EQ(waitpid(pid, nullptr, WNOHANG), 0) << "the sweep ended before it could be killed";
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  kill(-pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  ASSERT_FALSE(fs::exists(out / expected[1]["slug"].get<std::string>() / "summary.json"));
  const std::string first_point = read_file(out / expected[0]["slug"].get<std::string>() / "results.jsonl");

  const Outcome rerun = run_command(sweep_command(config, out));
  ASSERT_EQ(rerun.exit_code, 0) << rerun.output;
  // The finished point was not recomputed (its wall times would differ).
  EXPECT_EQ(read_file(out / expected[0]["slug"].get<std::string>() / "results.jsonl"), first_point);
  const std::vector<json> rows = read_lines(out / "sweep.jsonl");
  ASSERT_EQ(rows.size(), expected.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(computed_part(rows[i]), computed_part(expected[i])) << i;
    const std::string slug = rows[i]["slug"];
    // Problems in flight together finish in any order: compare by index.
    std::map<int64_t, json> a, b;
    for (const json& line : read_lines(out / slug / "results.jsonl")) a[line["index"]] = answer_part(line);
    for (const json& line : read_lines(dir_ / "whole" / slug / "results.jsonl")) b[line["index"]] = answer_part(line);
    ASSERT_EQ(a.size(), 10u) << slug;
    EXPECT_EQ(a, b) << slug;
  }
}

// Interrupted, a sweep says to run it again (a point's own hint, `seed run
// --resume`, is not a flag `seed sweep` takes), and running it again
// finishes it.
TEST_F(SweepCliTest, AnInterruptedSweepSaysToRunTheSameSweepAgain) {
  const fs::path config = write_config("interrupt", 10);
  const fs::path out = dir_ / "interrupted", log = dir_ / "interrupted.log";
  const pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);
    execl("/bin/sh", "sh", "-c", ("exec " + sweep_command(config, out) + " >" + log.string() + " 2>&1").c_str(),
          nullptr);
    _exit(127);
  }
  const auto some_problem_finished = [&] {
    if (!fs::is_directory(out)) return false;
    for (const fs::directory_entry& point : fs::directory_iterator(out)) {
      if (!read_lines(point.path() / "results.jsonl").empty()) return true;
    }
    return false;
  };
  while (!some_problem_finished()) {
    ASSERT_EQ(waitpid(pid, nullptr, WNOHANG), 0) << "the sweep ended before it could be interrupted";
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  kill(pid, SIGINT);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 130);
  const std::string said = read_file(log);
  EXPECT_NE(said.find("run the same `seed sweep` again"), std::string::npos) << said;
  EXPECT_EQ(said.find("--resume"), std::string::npos) << said;
  const Outcome rerun = run_command(sweep_command(config, out));
  EXPECT_EQ(rerun.exit_code, 0) << rerun.output;
}

TEST_F(SweepCliTest, TwoShardsGiveTheUnshardedSweepsPoints) {
  const fs::path config = write_config("shard", 1);
  ASSERT_EQ(run_command(sweep_command(config, dir_ / "unsharded")).exit_code, 0);
  const Outcome first = run_command(sweep_command(config, dir_ / "sharded", "--shard 0/2"));
  ASSERT_EQ(first.exit_code, 0) << first.output;
  EXPECT_EQ(read_lines(dir_ / "sharded" / "sweep.jsonl").size(), 2u);
  const Outcome second = run_command(sweep_command(config, dir_ / "sharded", "--shard 1/2"));
  ASSERT_EQ(second.exit_code, 0) << second.output;
  const std::vector<json> all = read_lines(dir_ / "unsharded" / "sweep.jsonl");
  const std::vector<json> joined = read_lines(dir_ / "sharded" / "sweep.jsonl");
  ASSERT_EQ(joined.size(), all.size());
  for (size_t i = 0; i < all.size(); ++i) EXPECT_EQ(computed_part(joined[i]), computed_part(all[i])) << i;
  const Outcome bad = run_command(sweep_command(config, dir_ / "sharded", "--shard 2/2"));
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.output.find("--shard"), std::string::npos) << bad.output;
}

TEST_F(SweepCliTest, APointReusesTheTargetAndPrmOfThePointBeforeAndWritesWhatItsOwnRunWrites) {
  // tasks/game24-prm: a one-step ToT-BFS whose states the zoo's PRM scores.
  const std::string src = SEED_SOURCE_DIR, target = src + "/models/zoo/tiny-target";
  const std::string bfs = "--search bfs --depth 1 --n 2 --b 1";
  const json config = {{"task", src + "/tasks/game24-prm"},
                       {"data", (dir_ / "24.csv").string()},
                       {"target", target},
                       {"draft", src + "/models/zoo/tiny-draft"},
                       {"limit", 2},
                       {"grid", {{"search", "bfs"}, {"depth", 1}, {"n", 2}, {"b", 1}, {"engine", {"ar", "seed"}}}}};
  std::ofstream(dir_ / "reuse.json") << config.dump(2);
  const Outcome sweep = run_command(std::string(SEED_BINARY) + " --threads 1 --log-level info sweep --config " +
                                    (dir_ / "reuse.json").string() + " --out " + (dir_ / "reuse").string());
  ASSERT_EQ(sweep.exit_code, 0) << sweep.output;
  const std::string reused = ": reusing the model already loaded";
  EXPECT_NE(sweep.output.find("--target " + target + reused), std::string::npos) << sweep.output;
  EXPECT_NE(sweep.output.find("the PRM " + src + "/models/zoo/tiny-prm" + reused), std::string::npos)
      << sweep.output;
  // Twice, both in the seed point: its target and PRM; its draft is new, and
  // the ar point reused nothing.
  EXPECT_EQ(occurrences(sweep.output, reused), 2u) << sweep.output;

  const std::vector<json> rows = read_lines(dir_ / "reuse" / "sweep.jsonl");
  ASSERT_EQ(rows.size(), 2u);
  const fs::path alone = dir_ / "reuse-alone";
  const Outcome run = run_command(std::string(SEED_BINARY) + " --threads 1 --log-level warn run --task " + src +
                                  "/tasks/game24-prm --data " + (dir_ / "24.csv").string() + " --target " + target +
                                  " --draft " + src + "/models/zoo/tiny-draft --limit 2 " + bfs +
                                  " --engine seed --out " + alone.string());
  ASSERT_EQ(run.exit_code, 0) << run.output;
  std::map<int64_t, json> in_sweep, by_itself;
  for (const json& line : read_lines(dir_ / "reuse" / rows[1]["slug"].get<std::string>() / "results.jsonl")) {
    in_sweep[line["index"]] = answer_part(line);
  }
  for (const json& line : read_lines(alone / "results.jsonl")) by_itself[line["index"]] = answer_part(line);
  ASSERT_EQ(in_sweep.size(), 2u);
  EXPECT_EQ(in_sweep, by_itself);
}

TEST_F(SweepCliTest, AChangedConfigAndAnUnknownKeyAreRefusedByName) {
  const fs::path config = write_config("changed", 1);
  ASSERT_EQ(run_command(sweep_command(config, dir_ / "changed")).exit_code, 0);
  const fs::path other = write_config("changed-limit", 2);
  const Outcome changed = run_command(sweep_command(other, dir_ / "changed"));
  EXPECT_EQ(changed.exit_code, 1);
  EXPECT_NE(changed.output.find("'limit'"), std::string::npos) << changed.output;

  std::ofstream(dir_ / "unknown.json") << R"({"task": "tasks/game24", "grid": {"serch": ["bfs"]}})";
  const Outcome unknown = run_command(sweep_command(dir_ / "unknown.json", dir_ / "unknown"));
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_NE(unknown.output.find("unknown.json"), std::string::npos) << unknown.output;
  EXPECT_NE(unknown.output.find("'serch'"), std::string::npos) << unknown.output;
}

// A run option's bad value is named by the point and the flag, as `seed
// run` names it.
TEST_F(SweepCliTest, ABadRunOptionValueNamesThePointAndTheFlag) {
  const json config = {{"task", std::string(SEED_SOURCE_DIR) + "/tasks/game24"},
                       {"limit", "one"},
                       {"grid", {{"search", {"cot"}}}}};
  std::ofstream(dir_ / "bad-limit.json") << config.dump();
  const Outcome r = run_command(sweep_command(dir_ / "bad-limit.json", dir_ / "bad-limit"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("sweep point search=cot (" + (dir_ / "bad-limit.json").string() +
                          "): --limit: expected an integer 0 or more, got one"),
            std::string::npos)
      << r.output;
}

// A point that fails is named with the config, and the points finished
// before it keep their rows in the tables.
TEST_F(SweepCliTest, AFailingPointIsNamedAndThePointsBeforeItAreTabled) {
  const std::string src = SEED_SOURCE_DIR;
  const fs::path other_vocabulary = dir_ / "other-vocabulary";
  fs::create_directories(other_vocabulary);
  json draft_config = json::parse(std::ifstream(src + "/models/zoo/tiny-draft/config.json"));
  draft_config["vocab_size"] = 320;
  std::ofstream(other_vocabulary / "config.json") << draft_config.dump();
  const json config = {{"task", src + "/tasks/game24"},
                       {"data", (dir_ / "24.csv").string()},
                       {"target", src + "/models/zoo/tiny-target"},
                       {"draft", other_vocabulary.string()},
                       {"limit", 1},
                       {"grid", {{"search", {"cot"}}, {"engine", {"ar", "seed"}}}}};
  const fs::path path = dir_ / "failing.json";
  std::ofstream(path) << config.dump();
  const Outcome r = run_command(sweep_command(path, dir_ / "failing"));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("sweep point search=cot_engine=seed (" + path.string() + "): --draft: "),
            std::string::npos)
      << r.output;
  const std::vector<json> rows = read_lines(dir_ / "failing" / "sweep.jsonl");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0]["params"]["engine"], "ar");
}

TEST_F(SweepCliTest, UnderMpirunEveryPointRunsOnTheRanksAndARerunKeepsFinishedPoints) {
  const fs::path config = write_config("mpi", 1);
  ASSERT_EQ(run_command(sweep_command(config, dir_ / "single")).exit_code, 0);
  const std::string mpirun = std::string(SEED_SOURCE_DIR) + "/launch/mpirun.sh -n 2 -- ";
  const Outcome first = run_command(mpirun + sweep_command(config, dir_ / "mpi"));
  ASSERT_EQ(first.exit_code, 0) << first.output;
  const std::vector<json> single = read_lines(dir_ / "single" / "sweep.jsonl"), ranks = read_lines(dir_ / "mpi" / "sweep.jsonl");
  ASSERT_EQ(ranks.size(), single.size());
  for (size_t i = 0; i < single.size(); ++i) {  // the answers; how drafting went may differ across ranks
    for (const char* key : {"slug", "params", "correct", "tokens_per_problem"}) {
      EXPECT_EQ(ranks[i][key], single[i][key]) << i << " " << key;
    }
  }
  const fs::path point = dir_ / "mpi" / single[0]["slug"].get<std::string>() / "results.jsonl";
  const std::string before = read_file(point);
  const Outcome again = run_command(mpirun + sweep_command(config, dir_ / "mpi"));
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_EQ(read_file(point), before);
  // Finished points are not shown as running, nor timed for the ETA.
  EXPECT_EQ(again.output.find("now "), std::string::npos) << again.output;
}

TEST_F(SweepCliTest, UnderMpirunTheTargetGroupAndDraftRankLoadTheirModelsOnceAndGiveTheSingleProcessPoints) {
  const fs::path config = write_config("tp", 1);
  ASSERT_EQ(run_command(sweep_command(config, dir_ / "tp-single")).exit_code, 0);
  // Ranks 1-2 the target group, rank 3 the draft rank.
  const Outcome ranks = run_command(std::string(SEED_SOURCE_DIR) + "/launch/mpirun.sh -n 4 -- " + SEED_BINARY +
                                    " --threads 1 --log-level debug --tp 2 sweep --config " + config.string() +
                                    " --out " + (dir_ / "tp").string());
  ASSERT_EQ(ranks.exit_code, 0) << ranks.output;
  const std::string src = SEED_SOURCE_DIR, reused = ": reusing the model already loaded";
  // Each target rank loads its shard at the first point and reuses it at
  // the three others; the draft rank loads the draft at the first seed
  // point (cot) and reuses it at the second (bfs). (A rank says the first
  // reuse of a model at info, the others at debug.)
  EXPECT_EQ(occurrences(ranks.output, "--target " + src + "/models/zoo/tiny-target" + reused), 6u) << ranks.output;
  EXPECT_EQ(occurrences(ranks.output, "--draft " + src + "/models/zoo/tiny-draft" + reused), 1u) << ranks.output;
  const std::vector<json> single = read_lines(dir_ / "tp-single" / "sweep.jsonl");
  const std::vector<json> tp = read_lines(dir_ / "tp" / "sweep.jsonl");
  ASSERT_EQ(tp.size(), 4u);
  ASSERT_EQ(single.size(), 4u);
  for (size_t i = 0; i < single.size(); ++i) {
    for (const char* key : {"slug", "params", "correct", "tokens_per_problem"}) {
      EXPECT_EQ(tp[i][key], single[i][key]) << i << " " << key;
    }
  }
}

// Headless Chromium, when installed (scripts/test.sh installs it).
std::string find_chromium() {
  for (const char* path : {"/usr/bin/chromium", "/usr/bin/chromium-browser"}) {
    if (fs::exists(path)) return path;
  }
  return "";
}

TEST_F(SweepCliTest, TheReportRendersEveryChartInHeadlessChromiumWithoutConsoleErrors) {
  const fs::path config = write_config("report", 1);
  ASSERT_EQ(run_command(sweep_command(config, dir_ / "report")).exit_code, 0);
  const Outcome report = run_command(std::string(SEED_BINARY) + " report " + (dir_ / "report").string());
  ASSERT_EQ(report.exit_code, 0) << report.output;
  const fs::path html = dir_ / "report" / "report.html";
  ASSERT_TRUE(fs::exists(html));
  const std::string chromium = find_chromium();
  if (chromium.empty()) GTEST_SKIP() << "no chromium: install it (bash scripts/test.sh does) to render the report";
  // A console message from the page is logged as "...:INFO:CONSOLE:line]
  // ..." (older versions: "CONSOLE(line)"); --dump-dom prints the page as
  // rendered.
  const Outcome dom = run_command(chromium + " --headless --no-sandbox --disable-gpu --enable-logging=stderr --v=0 "
                                             "--dump-dom file://" + html.string() + " 2>&1");
  ASSERT_EQ(dom.exit_code, 0) << dom.output;
  EXPECT_EQ(dom.output.find(":CONSOLE"), std::string::npos) << dom.output;
  const std::regex svg("<svg[^>]*>([\\s\\S]*?)</svg>");
  size_t charts = 0;
  for (auto it = std::sregex_iterator(dom.output.begin(), dom.output.end(), svg); it != std::sregex_iterator(); ++it) {
    ++charts;
    const std::string body = (*it)[1];
    EXPECT_TRUE(body.find("<circle") != std::string::npos || body.find("<rect x=") != std::string::npos) << body;
  }
  EXPECT_EQ(charts, 4u) << dom.output;
}

}  // namespace
