// A sweep's results table: one row per finished point, from the point's
// summary.json (written by `seed run`), with the accuracy's 95% Wilson
// interval and the speedup over the baseline engine at the same point.
// Written as DIR/sweep.jsonl and DIR/sweep.csv, each replaced whole (a
// rename), so that a reader or a second shard never sees half a table.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "launch/sweep_config.h"

namespace seed::launch {

struct Interval {
  double low = 0;
  double high = 0;
};

// The Wilson score interval of `successes` in `trials` at normal quantile
// `z` (1.96: 95%). Unlike the normal approximation it stays inside [0, 1]
// and is not empty at 0 or `trials` successes. {0, 1} for no trials.
Interval wilson_interval(int64_t successes, int64_t trials, double z = 1.959964);

// One table row: "slug", "params", and the figures of `summary` (a run's
// summary.json): problems, correct, accuracy with accuracy_low/high,
// tokens_per_problem, target_forwards, wall_s, tokens_per_s, alpha, tau;
// "speedup" is null until add_speedups.
nlohmann::json sweep_row(const SweepPoint& point, const nlohmann::json& summary);

// Sets each row's "speedup" (and "baseline", the baseline row's slug): its
// tokens/s over the baseline row's (as `seed bench` has it; for greedy
// searches, whose tokens do not depend on the engine, the ratio of wall
// times), where a row with engine
// `baseline_engine`, the same other parameters apart from the engine's own
// (draft model, draft length, drafters...) and the same problems exists.
void add_speedups(std::vector<nlohmann::json>* rows, const std::string& baseline_engine);

// The rows of every point of `config` that has finished in `dir` (its
// DIR/SLUG/summary.json exists), in grid order, with speedups.
std::vector<nlohmann::json> collect_sweep_rows(const std::string& dir, const SweepConfig& config);

// Writes DIR/sweep.jsonl and DIR/sweep.csv (params as columns). Throws kIo.
void write_sweep_tables(const std::string& dir, const std::vector<nlohmann::json>& rows);

}  // namespace seed::launch
