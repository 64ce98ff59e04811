// The pruned-candidate-tree options `seed run` and `seed bench spec` share.
#pragma once

#include <CLI/CLI.hpp>

namespace seed::launch {

// --pct-threshold and --pct-epsilon (spec::EngineOptions).
inline void add_pct_options(CLI::App* cmd, float* threshold, float* epsilon) {
  cmd->add_option("--pct-threshold", *threshold,
                  "Pruned trees: a node expands while its path confidence is at least this (0: the cost of a "
                  "draft step over a target step, measured at start, which also raises --pct-epsilon to the cost "
                  "of a verified node)")
      ->check(CLI::Range(0.0f, 1.0f))
      ->capture_default_str();
  cmd->add_option("--pct-epsilon", *epsilon, "Pruned trees: nodes whose path confidence is below this are dropped")
      ->check(CLI::Range(0.0f, 1.0f))
      ->capture_default_str();
}

}  // namespace seed::launch
