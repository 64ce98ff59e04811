// --concurrency N|auto for the commands that solve a task's problems
// (`seed run`, `seed bench search`), and the plan for one engine and search.
#pragma once

#include <CLI/CLI.hpp>

#include <cstddef>

#include "launch/concurrency.h"
#include "search/search.h"
#include "spec/api/engine.h"
#include "spec/engine/engine_factory.h"

namespace seed::launch {

// Adds --concurrency to `command`: N >= 1 into *value, auto as 0 (the default).
void add_concurrency_option(CLI::App* command, int* value);

// plan_concurrency for `problems` problems of `search` on `engine` (built
// from `options`), `requested` from --concurrency, on `cores` cores; logs
// the plan. Throws kInvalidArgument for N > 1 on an engine that serves one
// call at a time.
ConcurrencyPlan plan_problem_concurrency(int requested, const spec::Engine& engine,
                                         const spec::EngineOptions& options, const search::Search& search,
                                         int cores, size_t problems);

}  // namespace seed::launch
