// PrunedTreeBuilder: grows a pruned candidate tree (PrunedTree, drafter.h)
// one level at a time from the draft distributions a drafter computes, and
// prunes it at the end. The drafter owns the model and its caches; this
// decides which nodes exist and which expand. Torch-free; not thread-safe.
#pragma once

#include <cstdint>
#include <vector>

#include "spec/api/drafter.h"

namespace seed::spec {

class PrunedTreeBuilder {
 public:
  // Throws kInvalidArgument unless 0 < expand <= 1 and 0 <= prune <= 1.
  explicit PrunedTreeBuilder(PrunedTree rule);

  // Adds the `k` most probable tokens of `q` (the draft distribution at
  // `node`'s context, [vocab]; ties to the lower id, zeros left out) as
  // children of `node` (-1: the accepted prefix; else an expandable node
  // that has no children yet), most probable first. Returns how many of them
  // expand: a prefix of them, since path confidence falls with rank. A
  // child expands when `expandable` (false on the deepest level) and its
  // path confidence is at least both thresholds (a node below `prune` is
  // dropped at the end, and so would all its children be).
  int add_children(int32_t node, const float* q, int64_t vocab, int k, bool expandable);

  int32_t size() const { return static_cast<int32_t>(tokens_.size()); }
  float confidence(int32_t node) const { return confidence_[static_cast<size_t>(node)]; }
  int32_t token(int32_t node) const { return tokens_[static_cast<size_t>(node)]; }

  // The tree without the nodes whose path confidence is below `prune` (an
  // ancestor-closed set: confidence never rises along a path), renumbered
  // in the order they were added; deterministic. `renumbered` (if not null)
  // gets each added node's new index, or -1 if dropped.
  DraftTree finish(std::vector<int32_t>* renumbered = nullptr) const;

 private:
  PrunedTree rule_;
  std::vector<int32_t> tokens_, parents_;
  std::vector<float> confidence_;
  std::vector<bool> has_children_;
};

}  // namespace seed::spec
