// StaticTree: the fixed shape a model-free drafter fills with tokens (STAND,
// Song et al. 2025, sec. 4.2 and Algorithm 1, appendix A.1).
//
// Nodes are numbered in topological order; parents[i] is -1 (a child of the
// accepted prefix) or an earlier node. Siblings appear in rank order: the
// first child gets the drafter's first (most likely, or first Gumbel-top-k)
// token. A plain value; thread-safe to read.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace seed::spec {

struct StaticTree {
  std::vector<int32_t> parents;  // [n] -1 or an earlier node

  int32_t size() const { return static_cast<int32_t>(parents.size()); }
  std::vector<int> depths() const;        // [n] 1 for children of the prefix
  int depth() const;                       // deepest node (0 when empty)
  std::vector<int> nodes_per_depth() const;  // [depth() + 1], index 0 = the prefix (1)

  // k[d] children for every node at depth d (a product tree, as k_config).
  static StaticTree from_k_config(const std::vector<int>& k_config);
  // Algorithm 1's initial tree: 624 nodes below the prefix, depth 20.
  static StaticTree initial();

  // The `keep` nodes best by `counts` ([n], e.g. how often each node was on
  // an accepted path), ancestor-closed: grown best-first from the prefix,
  // so a node is taken only after its parent (ties: shallower, then lower
  // index). Renumbered in breadth-first order, siblings in their old order.
  StaticTree pruned(const std::vector<int64_t>& counts, int keep) const;

  // A JSON file {"format": "seed-static-tree", "version": 1, "parents": [...]}.
  // load() throws kInvalidArgument naming the file and the field at fault
  // (kIo if unreadable); save() throws kIo.
  static StaticTree load(const std::string& path);
  void save(const std::string& path) const;
};

}  // namespace seed::spec
