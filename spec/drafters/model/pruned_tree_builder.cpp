#include "spec/drafters/model/pruned_tree_builder.h"

#include <algorithm>
#include <cstdint>

#include "models/base/error.h"

namespace seed::spec {

PrunedTreeBuilder::PrunedTreeBuilder(PrunedTree rule) : rule_(rule) {
  SEED_CHECK(rule.expand > 0.0f && rule.expand <= 1.0f, kInvalidArgument)
      << "pruned tree: expansion threshold " << rule.expand << " outside (0, 1]";
  SEED_CHECK(rule.prune >= 0.0f && rule.prune <= 1.0f, kInvalidArgument)
      << "pruned tree: pruning threshold " << rule.prune << " outside [0, 1]";
}

int PrunedTreeBuilder::add_children(int32_t node, const float* q, int64_t vocab, int k, bool expandable) {
  SEED_CHECK(node >= -1 && node < size(), kInvalidArgument) << "pruned tree: no node " << node;
  const float parent = node < 0 ? 1.0f : confidence_[static_cast<size_t>(node)];
  if (node >= 0) {
    SEED_CHECK(!has_children_[static_cast<size_t>(node)], kInvalidArgument)
        << "pruned tree: node " << node << " already has children";
    has_children_[static_cast<size_t>(node)] = true;
  }
  const TopTokens top = top_entries(q, vocab, k);
  const float threshold = std::max(rule_.expand, rule_.prune);
  int expanding = 0;
  for (size_t rank = 0; rank < top.ids.size(); ++rank) {
    const float path = parent * top.probs[rank];
    tokens_.push_back(top.ids[rank]);
    parents_.push_back(node);
    confidence_.push_back(path);
    has_children_.push_back(false);
    if (expandable && path >= threshold) ++expanding;
  }
  return expanding;
}

DraftTree PrunedTreeBuilder::finish(std::vector<int32_t>* renumbered) const {
  DraftTree tree;
  tree.deterministic = true;
  std::vector<int32_t> index(tokens_.size(), -1);
  for (size_t i = 0; i < tokens_.size(); ++i) {
    if (confidence_[i] < rule_.prune) continue;
    index[i] = static_cast<int32_t>(tree.tokens.size());
    tree.tokens.push_back(tokens_[i]);
    const int32_t parent = parents_[i];
    tree.parents.push_back(parent < 0 ? -1 : index[static_cast<size_t>(parent)]);
  }
  if (renumbered != nullptr) *renumbered = std::move(index);
  return tree;
}

}  // namespace seed::spec
