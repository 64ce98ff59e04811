// The subcommands of `seed`. Each adds itself to the CLI11 app, owns its
// options, and runs from CLI11's callback; errors propagate as seed::Error
// to main, which prints them.
#pragma once

#include <CLI/CLI.hpp>

namespace seed::launch {

struct GlobalOptions {
  int threads = 0;  // intra-op threads; 0 = all hardware threads
};

void add_generate_command(CLI::App& app, const GlobalOptions& global);
void add_bench_command(CLI::App& app, const GlobalOptions& global);
void add_train_command(CLI::App& app, const GlobalOptions& global);
void add_corpus_command(CLI::App& app, const GlobalOptions& global);
void add_eval_command(CLI::App& app, const GlobalOptions& global);

}  // namespace seed::launch
