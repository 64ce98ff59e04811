// The sweep table on hand-made runs: Wilson intervals, rows from
// summary.json files, speedups over the baseline engine, and the files.
#include "launch/sweep_table.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace seed::launch {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

TEST(WilsonIntervalTest, MatchesPublishedValues) {
  // 8 of 10 at 95%: (0.4902, 0.9433), as in Brown, Cai and DasGupta (2001)'s formula.
  const Interval a = wilson_interval(8, 10);
  EXPECT_NEAR(a.low, 0.4902, 1e-4);
  EXPECT_NEAR(a.high, 0.9433, 1e-4);
  // 0 of 10 is not an empty interval: (0, 0.2775).
  const Interval z = wilson_interval(0, 10);
  EXPECT_DOUBLE_EQ(z.low, 0.0);
  EXPECT_NEAR(z.high, 0.2775, 1e-4);
  const Interval f = wilson_interval(10, 10);
  EXPECT_NEAR(f.low, 0.7225, 1e-4);
  EXPECT_DOUBLE_EQ(f.high, 1.0);
  const Interval none = wilson_interval(0, 0);
  EXPECT_EQ(none.low, 0.0);
  EXPECT_EQ(none.high, 1.0);
}

SweepPoint point(const std::string& slug, const json& params) { return {params, slug}; }

json summary(int problems, int correct, double wall_s, int tokens) {
  return {{"problems", problems},  {"correct", correct},   {"accuracy", double(correct) / problems},
          {"tokens_per_problem", double(tokens) / problems}, {"target_forwards", tokens}, {"wall_s", wall_s},
          {"tokens_per_s", tokens / wall_s}, {"alpha", 0.5}, {"tau", 1.5}};
}

TEST(SweepTableTest, SpeedupIsOverTheBaselineEngineAtTheSamePoint) {
  std::vector<json> rows = {
      sweep_row(point("bfs-ar", {{"search", "bfs"}, {"b", 1}, {"engine", "ar"}}), summary(4, 1, 8.0, 400)),
      sweep_row(point("bfs-seed", {{"search", "bfs"}, {"b", 1}, {"engine", "seed"}, {"draft-length", 4}}),
                summary(4, 1, 2.0, 400)),
      sweep_row(point("bfs2-seed", {{"search", "bfs"}, {"b", 2}, {"engine", "seed"}}), summary(4, 2, 3.0, 800)),
  };
  add_speedups(&rows, "ar");
  EXPECT_TRUE(rows[0]["speedup"].is_null());
  EXPECT_DOUBLE_EQ(rows[1]["speedup"].get<double>(), 4.0);
  EXPECT_EQ(rows[1]["baseline"], "bfs-ar");
  EXPECT_TRUE(rows[2]["speedup"].is_null());  // no ar run at b = 2
  EXPECT_DOUBLE_EQ(rows[1]["accuracy"].get<double>(), 0.25);
  EXPECT_NEAR(rows[1]["accuracy_low"].get<double>(), wilson_interval(1, 4).low, 1e-12);
  EXPECT_DOUBLE_EQ(rows[1]["tokens_per_problem"].get<double>(), 100.0);
}

TEST(SweepTableTest, CollectsFinishedPointsAndWritesBothTables) {
  const fs::path dir = fs::temp_directory_path() / ("seed_sweep_table_test_" + std::to_string(getpid()));
  fs::remove_all(dir);
  SweepConfig config;
  config.points = {point("a", {{"engine", "ar"}, {"search", "cot"}}), point("b", {{"engine", "seed"}, {"search", "cot"}}),
                   point("c", {{"engine", "seed"}, {"search", "bfs, wide"}})};
  for (const char* slug : {"a", "b"}) fs::create_directories(dir / slug);
  fs::create_directories(dir / "c");  // started, not finished: no summary.json
  std::ofstream(dir / "a" / "summary.json") << summary(10, 8, 5.0, 1000).dump();
  std::ofstream(dir / "b" / "summary.json") << summary(10, 8, 2.5, 1000).dump();
  const std::vector<json> rows = collect_sweep_rows(dir.string(), config);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_DOUBLE_EQ(rows[1]["speedup"].get<double>(), 2.0);
  write_sweep_tables(dir.string(), rows);
  std::ifstream jsonl(dir / "sweep.jsonl");
  std::vector<json> written;
  for (std::string line; std::getline(jsonl, line);) written.push_back(json::parse(line));
  EXPECT_EQ(written, rows);
  std::ifstream csv(dir / "sweep.csv");
  std::string header, first;
  std::getline(csv, header);
  std::getline(csv, first);
  EXPECT_EQ(header.rfind("slug,engine,search,problems,correct,accuracy,accuracy_low,accuracy_high,", 0), 0u) << header;
  EXPECT_EQ(first.rfind("a,ar,cot,10,8,0.8,", 0), 0u) << first;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace seed::launch
