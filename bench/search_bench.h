// `seed bench search`: one search over a task's first problems, run twice
// with the same engine, the KV caches' prefix sharing on and off. What a
// search shares across its branches shows up as prompt tokens the target
// did not compute; the results must not change.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "search/search.h"
#include "spec/api/engine.h"
#include "spec/engine/engine_factory.h"
#include "tasks/task.h"

namespace seed::bench {

struct SearchBenchOptions {
  std::string task_dir;
  tasks::TaskLoadOptions data;  // --data and SEED_DATA_DIR (tasks/task_data_path.h)
  std::string search = "bfs";
  int limit = 10;      // the task's first problems
  uint64_t seed = 0;   // the run seed (search::SearchConfig)
  spec::EngineOptions engine;  // prefix_cache is set per row
  // Builds each row's engine; empty: spec::make_engine.
  std::function<std::unique_ptr<spec::Engine>(const spec::EngineOptions&)> make_engine;
  // How many of `problems` problems of `search` a row solves at once on
  // `engine`; empty: one at a time.
  std::function<int(const spec::Engine& engine, const search::Search& search, size_t problems)>
      problems_in_flight;
};

struct SearchBenchRow {
  std::string task, search, engine;
  bool prefix_cache = false;
  int64_t problems = 0;
  int concurrency = 1;         // problems in flight
  int64_t correct = 0;
  int64_t prompt_tokens = 0;   // prompt tokens the search requested
  int64_t prefill_tokens = 0;  // of those, computed by the target
  int64_t tokens = 0;          // generated
  int64_t kv_peak_bytes = 0;   // the target's KV cache at its largest
  int64_t evicted_blocks = 0;
  double wall_s = 0;
  std::vector<std::string> answers;  // per problem, to compare rows
  double prefill_per_token() const { return tokens ? double(prefill_tokens) / double(tokens) : 0.0; }
};

struct SearchBenchResult {
  std::vector<SearchBenchRow> rows;  // prefix cache off, then on
  // Same answers and token counts in every row.
  bool identical() const;
  nlohmann::json to_json() const;
};

// Runs the rows, calling `on_row` as each finishes. Throws what loading the
// task, the search or the engine throws.
SearchBenchResult run_search_bench(const SearchBenchOptions& options,
                                   const std::function<void(const SearchBenchRow&)>& on_row = {});

}  // namespace seed::bench
