#include "bench/search_bench.h"

#include <algorithm>
#include <chrono>

#include "search/concurrently.h"
#include "search/search.h"
#include "spec/reward/prm_scorer.h"
#include "tasks/task.h"

namespace seed::bench {

namespace {

using Clock = std::chrono::steady_clock;

SearchBenchRow run_row(const SearchBenchOptions& o, const tasks::Task& task, const search::Search& search,
                       bool prefix_cache) {
  spec::EngineOptions engine_options = o.engine;
  engine_options.prefix_cache = prefix_cache;
  engine_options.chat_system = task.spec().chat_system;
  engine_options.chat_variables = task.spec().chat_variables;
  const std::unique_ptr<spec::Engine> engine =
      o.make_engine ? o.make_engine(engine_options) : spec::make_engine(engine_options);
  const std::unique_ptr<spec::StepScorer> scorer =
      task.spec().evaluate.mode == tasks::EvaluateMode::kPrm
          ? spec::load_prm_scorer(task.spec().evaluate.prm.model, engine_options)
          : nullptr;
  SearchBenchRow row;
  row.task = task.spec().name;
  row.search = search.name();
  row.engine = engine->name();
  row.prefix_cache = prefix_cache;
  const size_t count = std::min<size_t>(static_cast<size_t>(std::max(o.limit, 0)), task.problems().size());
  row.concurrency = o.problems_in_flight ? o.problems_in_flight(*engine, search, count) : 1;
  row.answers.resize(count);
  std::vector<char> correct(count, 0);
  const Clock::time_point start = Clock::now();
  search::run_concurrently(count, row.concurrency, [&](size_t i) {
    const tasks::Problem& problem = task.problems()[i];
    const search::SearchResult result = search.solve(task, problem, *engine, scorer.get());
    correct[i] = task.checker().check(problem, result.answer).correct;
    row.answers[i] = result.answer;
  });
  row.correct = std::count(correct.begin(), correct.end(), 1);
  row.wall_s = std::chrono::duration<double>(Clock::now() - start).count();
  const spec::EngineStats stats = engine->stats();
  row.problems = static_cast<int64_t>(count);
  row.prompt_tokens = stats.prefill.prompt_tokens;
  row.prefill_tokens = stats.prefill.computed_tokens;
  row.tokens = stats.generated_tokens;
  row.kv_peak_bytes = stats.prefill.kv_peak_bytes;
  row.evicted_blocks = stats.prefill.evicted_blocks;
  return row;
}

}  // namespace

bool SearchBenchResult::identical() const {
  return std::all_of(rows.begin(), rows.end(), [&](const SearchBenchRow& r) {
    return r.answers == rows.front().answers && r.tokens == rows.front().tokens;
  });
}

nlohmann::json SearchBenchResult::to_json() const {
  nlohmann::json out = {{"rows", nlohmann::json::array()}, {"identical", identical()}};
  for (const SearchBenchRow& r : rows) {
    out["rows"].push_back({{"task", r.task},
                           {"search", r.search},
                           {"engine", r.engine},
                           {"prefix_cache", r.prefix_cache},
                           {"problems", r.problems},
                           {"concurrency", r.concurrency},
                           {"correct", r.correct},
                           {"prompt_tokens", r.prompt_tokens},
                           {"prefill_tokens", r.prefill_tokens},
                           {"tokens", r.tokens},
                           {"prefill_per_token", r.prefill_per_token()},
                           {"kv_peak_bytes", r.kv_peak_bytes},
                           {"evicted_blocks", r.evicted_blocks},
                           {"wall_s", r.wall_s}});
  }
  return out;
}

SearchBenchResult run_search_bench(const SearchBenchOptions& o,
                                   const std::function<void(const SearchBenchRow&)>& on_row) {
  const tasks::Task task = tasks::Task::load(o.task_dir, o.data);
  search::SearchConfig config;
  config.algorithm = o.search;
  config.params = task.spec().search;
  config.seed = o.seed;
  const std::unique_ptr<search::Search> search = search::make_search(config);
  search->check(task);
  SearchBenchResult result;
  for (const bool prefix_cache : {false, true}) {
    result.rows.push_back(run_row(o, task, *search, prefix_cache));
    if (on_row) on_row(result.rows.back());
  }
  return result;
}

}  // namespace seed::bench
