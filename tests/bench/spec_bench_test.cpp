// seed bench spec's rows: one per draft folder for the model drafter, an
// EDD draft named as such, each beside the others in one run.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include "bench/spec_bench.h"
#include "tests/spec/engine_fixtures.h"

namespace seed::bench {
namespace {

namespace fs = std::filesystem;

TEST(SpecBench, RunsARowPerDraftAndNamesEddDrafts) {
  const fs::path dir = fs::temp_directory_path() / ("seed_spec_bench_test_" + std::to_string(::getpid()));
  const std::string zoo = SEED_ZOO_DIR;
  SpecBenchOptions o;
  o.target = zoo + "/tiny-target";
  o.drafts = {zoo + "/tiny-draft", seed::testing::write_edd(o.target, dir / "zoo-edd", 2)};
  o.engines = {"ar", "sd"};
  o.trees = {"fixed", "pct"};  // chains of 7 every round, so that each row drafts
  o.n = {1};
  o.temperatures = {0.0f};
  o.repeats = 1;
  o.thought_tokens = 12;
  o.evaluation_tokens = 2;
  std::vector<std::string> rows;
  const SpecBenchResult result = run_spec_bench(o, [&](const SpecBenchRow& row) {
    rows.push_back(row.drafter + ":" + row.draft + ":" + row.tree);
    if (row.engine == "sd") {
      EXPECT_GT(row.alpha, 0.0) << rows.back();
    }
  });
  EXPECT_EQ(rows, (std::vector<std::string>{"::", "model:tiny-draft:chain 7", "model:tiny-draft:pct",
                                             "edd:zoo-edd:chain 7", "edd:zoo-edd:pct"}));
  EXPECT_EQ(result.to_json()["rows"][3]["draft"], "zoo-edd");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace seed::bench
