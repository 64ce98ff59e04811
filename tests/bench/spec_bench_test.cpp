// seed bench spec's rows: one per draft folder for the model drafter, an
// EDD draft named as such, each beside the others in one run; the rows of
// one n and temperature taking their repeats in turns, and speedups the
// medians of the repeats' ratios.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <omp.h>

#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
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

// A real engine that writes down each generate() call: its engine's name,
// the request group (0: the warm-up; repeat r: r + 1) and, where asked,
// the calling thread's OpenMP team size.
class RecordingEngine final : public spec::Engine {
 public:
  RecordingEngine(std::unique_ptr<spec::Engine> engine, std::vector<std::string>& calls, bool threads = false)
      : engine_(std::move(engine)), calls_(calls), threads_(threads) {}
  using spec::Engine::generate;
  std::vector<spec::Completion> generate(const std::vector<spec::GenRequest>& requests,
                                         const spec::CompletionCallback& on_complete) override {
    calls_.push_back(engine_->name() + " " + std::to_string(requests.front().group) +
                     (threads_ ? " x" + std::to_string(omp_get_max_threads()) : ""));
    return engine_->generate(requests, on_complete);
  }
  std::string name() const override { return engine_->name(); }
  spec::EngineStats stats() const override { return engine_->stats(); }
  void reset_stats() override { engine_->reset_stats(); }
  spec::DraftPlan draft_plan() const override { return engine_->draft_plan(); }

 private:
  std::unique_ptr<spec::Engine> engine_;
  std::vector<std::string>& calls_;
  bool threads_;
};

SpecBenchOptions two_engines_twice(std::vector<std::string>& calls) {
  const std::string zoo = SEED_ZOO_DIR;
  SpecBenchOptions o;
  o.target = zoo + "/tiny-target";
  o.drafts = {zoo + "/tiny-draft"};
  o.engines = {"ar", "sd"};
  o.n = {1};
  o.temperatures = {0.0f};
  o.repeats = 2;
  o.thought_tokens = 4;
  o.evaluation_tokens = 2;
  o.make_engine = [&calls](const spec::EngineOptions& eo) {
    return std::make_unique<RecordingEngine>(spec::make_engine(eo), calls);
  };
  return o;
}

TEST(SpecBench, RowsOfOneGroupTakeTheirRepeatsInTurns) {
  std::vector<std::string> calls;
  run_spec_bench(two_engines_twice(calls), [](const SpecBenchRow&) {});
  // Each engine's warm-up, then each repeat's thoughts and evaluations,
  // every engine's first repeat before any engine's second.
  EXPECT_EQ(calls, (std::vector<std::string>{"ar 0", "sd 0", "ar 1", "ar 1", "sd 1", "sd 1", "ar 2", "ar 2", "sd 2",
                                             "sd 2"}));
}

TEST(SpecBench, EnginesTooLargeToHoldTogetherRunOneAfterAnother) {
  std::vector<std::string> calls;
  SpecBenchOptions o = two_engines_twice(calls);
  o.side_by_side_bytes = 1;  // less than the zoo pair's weights
  run_spec_bench(o, [](const SpecBenchRow&) {});
  EXPECT_EQ(calls, (std::vector<std::string>{"ar 0", "ar 1", "ar 1", "ar 2", "ar 2", "sd 0", "sd 1", "sd 1", "sd 2",
                                             "sd 2"}));
}

TEST(SpecBench, EachRowsRepeatsRunOnTheThreadsPlannedForIt) {
  std::vector<std::string> calls;
  SpecBenchOptions o = two_engines_twice(calls);
  o.repeats = 1;
  o.plan_threads = [](spec::EngineOptions& eo, int) {
    omp_set_num_threads(eo.engine == spec::EngineKind::kAr ? 1 : 2);
    return std::string();
  };
  o.make_engine = [&calls](const spec::EngineOptions& eo) {
    return std::make_unique<RecordingEngine>(spec::make_engine(eo), calls, true);
  };
  const int before = omp_get_max_threads();
  run_spec_bench(o, [](const SpecBenchRow&) {});
  omp_set_num_threads(before);
  EXPECT_EQ(calls, (std::vector<std::string>{"ar 0 x1", "sd 0 x2", "ar 1 x1", "ar 1 x1", "sd 1 x2", "sd 1 x2"}));
}

// An engine whose repeats run at the tokens/s it is given, one a repeat
// (thoughts and evaluations alike); its warm-up counts nothing.
class PacedEngine final : public spec::Engine {
 public:
  PacedEngine(std::string name, std::vector<double> tokens_per_s)
      : name_(std::move(name)), tokens_per_s_(std::move(tokens_per_s)) {}
  using spec::Engine::generate;
  std::vector<spec::Completion> generate(const std::vector<spec::GenRequest>& requests,
                                         const spec::CompletionCallback&) override {
    const uint64_t group = requests.front().group;
    if (group > 0) {
      stats_.generated_tokens += static_cast<int64_t>(tokens_per_s_.at(group - 1));
      stats_.wall_s += 1;
    }
    return std::vector<spec::Completion>(requests.size());
  }
  std::string name() const override { return name_; }
  spec::EngineStats stats() const override { return stats_; }
  void reset_stats() override { stats_ = {}; }

 private:
  std::string name_;
  std::vector<double> tokens_per_s_;
  spec::EngineStats stats_;
};

TEST(SpecBench, ASpeedupIsTheMedianOfTheRepeatsRatios) {
  const std::string zoo = SEED_ZOO_DIR;
  SpecBenchOptions o;
  o.target = zoo + "/tiny-target";  // for the limits measured first
  o.drafts = {zoo + "/tiny-draft"};
  o.engines = {"ar", "ar-batch"};
  o.n = {2};
  o.temperatures = {0.0f};
  o.repeats = 3;
  o.make_engine = [](const spec::EngineOptions& eo) {
    // ar's repeats run at 100, 300 and 200 tokens/s (median 200); ar-batch's
    // at 300, 400 and 220 (median 300), 3, 4/3 and 1.1 times ar's.
    return eo.engine == spec::EngineKind::kAr
               ? std::make_unique<PacedEngine>("ar", std::vector<double>{100, 300, 200})
               : std::make_unique<PacedEngine>("ar-batch", std::vector<double>{300, 400, 220});
  };
  std::vector<SpecBenchRow> rows;
  run_spec_bench(o, [&](const SpecBenchRow& row) { rows.push_back(row); });
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_DOUBLE_EQ(rows[0].tokens_per_s, 200);
  EXPECT_DOUBLE_EQ(rows[1].tokens_per_s, 300);
  EXPECT_DOUBLE_EQ(rows[0].speedup_vs_ar, 1);
  EXPECT_DOUBLE_EQ(rows[0].speedup_vs_ar_batch, 0.75);  // not 200 / 300
  EXPECT_DOUBLE_EQ(rows[1].speedup_vs_ar, 400.0 / 300);  // not 300 / 200
  EXPECT_DOUBLE_EQ(rows[1].speedup_vs_ar_batch, 1);
}

}  // namespace
}  // namespace seed::bench
