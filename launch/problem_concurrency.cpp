#include "launch/problem_concurrency.h"

#include <spdlog/spdlog.h>

#include <limits>
#include <optional>
#include <string>

#include "launch/option_checks.h"
#include "models/base/error.h"

namespace seed::launch {

void add_concurrency_option(CLI::App* command, int* value) {
  command
      ->add_option_function<std::string>(
          "--concurrency",
          [value](const std::string& text) {
            if (text == "auto") {
              *value = 0;
              return;
            }
            const std::optional<long long> number = whole_integer(text);
            *value = number && *number >= 1 && *number <= std::numeric_limits<int>::max() ? int(*number) : -1;
            SEED_CHECK(*value >= 1, kInvalidArgument)
                << "--concurrency: '" << text << "' is neither a number >= 1 nor auto";
          },
          "Problems solved at once, their requests sharing the engine's target forwards: N or auto (by the "
          "engine, the device and each search step's requests; logged at start)")
      ->default_str("auto");
}

ConcurrencyPlan plan_problem_concurrency(int requested, const spec::Engine& engine,
                                         const spec::EngineOptions& options, const search::Search& search,
                                         int cores, size_t problems) {
  ConcurrencyRequest request;
  request.requested = requested;
  request.engine_shares = engine.serves_concurrent_calls();
  request.engine_batches = options.engine.batched_verify() || options.engine.drafter_pool();
  request.gpu = options.device.rfind("cuda", 0) == 0;
  request.cores = cores;
  request.max_batch = options.max_batch;
  request.requests_per_step = search.requests_per_step();
  request.problems = problems;
  const ConcurrencyPlan plan = plan_concurrency(request);
  SEED_CHECK(request.engine_shares || plan.problems_in_flight == 1, kInvalidArgument)
      << "--concurrency " << requested << ": engine " << engine.name() << " serves one problem at a time; use "
      << "--concurrency 1";
  spdlog::info("concurrency: {}", plan.describe());
  return plan;
}

}  // namespace seed::launch
