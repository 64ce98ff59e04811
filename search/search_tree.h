// SearchTree: the reasoning tree a search explores, kept for inspection
// (`seed run --tree-out`) and for the algorithms' bookkeeping.
//
// Node 0 is the root (the problem, no thought). Each other node holds one
// thought; the state of a node is the thoughts on the path from the root.
// Ids are dense and given in creation order, which every algorithm makes
// deterministic, so ids also key the random streams of requests
// (search/search_context.h). Not thread-safe; one tree per problem.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <vector>

#include "tasks/task.h"

namespace seed::search {

struct Node {
  int id = 0;
  int parent = -1;  // -1 for the root
  int depth = 0;    // thoughts on the path from the root
  tasks::Thought thought;
  // A node made from a whole chain of thought (cot, best-of-n,
  // self-consistency): its state is the chain split into lines.
  bool chain = false;
  std::vector<int> children;  // in creation order
  bool expanded = false;      // thoughts were generated from it
  bool final = false;         // the task says its path is complete
  std::optional<double> value;  // the evaluator's score (sum over samples, or votes)
  // Bookkeeping some algorithms keep (0 / -1 otherwise):
  int order = -1;        // when it was expanded (0, 1, ...)
  int subtree = -1;      // dvts: the subtree it belongs to
  int visits = 0;        // mcts: backed-up visits
  double value_sum = 0;  // mcts: sum of backed-up values in [0, 1]
  double prior = 0;      // mcts: PUCT prior
  bool kept = false;     // bfs: kept in a beam; dvts: a subtree's chosen node
};

// The order every algorithm ranks candidates by: the higher value (none
// counts 0), then a final node (its path complete), then the earlier node.
inline bool ranks_above(const Node& a, const Node& b) {
  const double va = a.value.value_or(0), vb = b.value.value_or(0);
  if (va != vb) return va > vb;
  if (a.final != b.final) return a.final;
  return a.id < b.id;
}

struct TreeSummary {
  int nodes = 0;        // including the root
  int expanded = 0;
  int evaluated = 0;    // nodes with a value
  int max_depth = 0;
  int chosen_depth = -1;  // depth of the node the answer came from, -1 if none
};

class SearchTree {
 public:
  SearchTree();  // just the root

  // Adds a child of `parent` (which must exist) and returns its id.
  int add_child(int parent, tasks::Thought thought);

  Node& node(int id);
  const Node& node(int id) const;
  int size() const { return static_cast<int>(nodes_.size()); }

  // Ids from the root to `id`, both included.
  std::vector<int> path(int id) const;

  // Marks the node the answer came from (and so its path).
  void set_chosen(int id);
  int chosen() const { return chosen_; }

  TreeSummary summary() const;

  // {"nodes": [{id, parent, depth, thought, value, ...}], "chosen_path": [...]}.
  nlohmann::json to_json() const;

 private:
  std::vector<Node> nodes_;
  int chosen_ = -1;
};

}  // namespace seed::search
