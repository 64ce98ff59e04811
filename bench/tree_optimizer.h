// STAND's data-driven static tree (Song et al. 2025, sec. 4.2; notes
// shared/notes/stand.md 2.4): run STAND drafting into Algorithm 1's
// 625-node tree over sample problems (best-of-n chains of thought on Game
// of 24 puzzles, one request group per puzzle), count how often each node
// carried an accepted token, and keep the N most often accepted nodes as an
// ancestor-closed tree (StaticTree::pruned). What `seed tree` runs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "spec/static_tree.h"

namespace seed::bench {

struct TreeOptimizeOptions {
  std::string target = "models/zoo/tiny-target";
  std::vector<std::string> puzzles = {"1 1 4 6", "2 3 5 12", "3 3 8 8", "1 2 7 9"};  // one group each
  int trajectories = 4;     // chains per puzzle
  int tokens = 96;          // max_new_tokens of a chain
  float temperature = 0.7f;
  uint64_t seed = 1000;     // apart from `seed bench spec`'s streams
};

struct TreeCounts {
  spec::StaticTree initial;     // Algorithm 1's tree
  std::vector<int64_t> counts;  // [initial.size()] accepted tokens per node
  double tau = 0;               // tokens per target forward of the run
};

// Throws what loading the target throws, kInvalidArgument for bad options.
TreeCounts count_accepted_nodes(const TreeOptimizeOptions& options);

}  // namespace seed::bench
