// `seed tokenize` (launch/tokenize_command.cpp) and `seed bench tokenize`
// (launch/bench_tokenize.cpp): the tokenizer alone, without a model.
#pragma once

#include <CLI/CLI.hpp>

namespace seed::launch {

void add_tokenize_command(CLI::App& app);
// Adds `tokenize` under the `seed bench` subcommand.
void add_bench_tokenize_command(CLI::App& bench);

}  // namespace seed::launch
