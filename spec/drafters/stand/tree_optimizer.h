// STAND's data-driven static tree (Song et al. 2025, "STAND", sec. 4.2):
// run STAND drafting into Algorithm 1's 625-node tree over sample prompts
// (sampled chains, one request group per prompt), count how often each node
// carried an accepted token, and keep the N most often accepted nodes as an
// ancestor-closed tree (StaticTree::pruned). What `seed tree` runs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "spec/drafters/stand/static_tree.h"

namespace seed::spec {

struct TreeOptimizeOptions {
  std::string target = "models/zoo/tiny-target";
  std::vector<std::string> prompts;  // one request group each
  int trajectories = 4;              // chains per prompt
  int tokens = 96;                   // max_new_tokens of a chain
  float temperature = 0.7f;
  uint64_t seed = 1000;  // apart from `seed bench spec`'s streams
};

struct TreeCounts {
  StaticTree initial;           // Algorithm 1's tree
  std::vector<int64_t> counts;  // [initial.size()] accepted tokens per node
  double tau = 0;               // tokens per target forward of the run
};

// Throws what loading the target throws, kInvalidArgument for bad options.
TreeCounts count_accepted_nodes(const TreeOptimizeOptions& options);

}  // namespace seed::spec
