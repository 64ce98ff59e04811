// The folder of a sweep: DIR/sweep.json (the config it was started with),
// one `seed run` folder per point (DIR/SLUG), and the tables
// (launch/sweep_table.h). The stored config is what makes a rerun safe: a
// rerun with a config that expands differently is refused, as `seed run
// --resume` refuses other settings.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "launch/sweep_config.h"

namespace seed::launch {

// Creates `dir` and stores `config` (the file's JSON, expanded as
// `expanded`) as DIR/sweep.json, or, if DIR/sweep.json exists, checks that
// it expands to the same sweep: kInvalidArgument naming the first
// differing key otherwise. Shards of one sweep share the folder.
void open_sweep_folder(const std::string& dir, const nlohmann::json& config, const SweepConfig& expanded,
                       const RunOptionCheck& is_run_option);

// The sweep stored in `dir` (kNotFound without DIR/sweep.json).
SweepConfig read_sweep_folder(const std::string& dir, const RunOptionCheck& is_run_option);

// Whether DIR/SLUG has finished: its run wrote summary.json.
bool sweep_point_finished(const std::string& dir, const SweepPoint& point);

}  // namespace seed::launch
