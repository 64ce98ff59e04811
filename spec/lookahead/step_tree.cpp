#include "spec/lookahead/step_tree.h"

#include <algorithm>
#include <cstdint>

#include "models/base/error.h"

namespace seed::spec {

StepTree::StepTree(std::vector<int32_t> committed) { restart(std::move(committed)); }

StepTree::Node& StepTree::node(Id id) {
  const auto found = nodes_.find(id);
  SEED_CHECK(found != nodes_.end(), kInternal) << "step tree: no node " << id;
  return found->second;
}

const StepTree::Node& StepTree::node(Id id) const {
  const auto found = nodes_.find(id);
  SEED_CHECK(found != nodes_.end(), kInternal) << "step tree: no node " << id;
  return found->second;
}

bool StepTree::continues(const Node& n) const { return !n.draft || n.draft->finish == FinishReason::kStop; }

StepTree::Id StepTree::add(Node n) {
  const Id id = next_id_++;
  nodes_.emplace(id, std::move(n));
  return id;
}

std::vector<StepTree::Id> StepTree::to_expand(int max_depth) const {
  std::vector<Id> out;
  for (const auto& [id, n] : nodes_) {
    if (n.expansion == Progress::kNotAsked && continues(n) && depth(id) < max_depth) out.push_back(id);
  }
  std::stable_sort(out.begin(), out.end(), [&](Id a, Id b) { return depth(a) < depth(b); });
  return out;
}

std::vector<StepTree::Id> StepTree::to_verify() const {
  std::vector<Id> out;
  for (const auto& [id, n] : nodes_) {
    if (n.verification == Progress::kNotAsked && continues(n)) out.push_back(id);
  }
  return out;
}

void StepTree::add_child(Id parent, Completion draft) {
  Node& p = node(parent);
  for (const Id sibling : p.children) {
    if (node(sibling).draft->tokens == draft.tokens && node(sibling).draft->finish == draft.finish) return;
  }
  Node child;
  child.path = p.path;
  child.path.insert(child.path.end(), draft.tokens.begin(), draft.tokens.end());
  child.depth = p.depth + 1;
  child.draft = std::move(draft);
  const Id id = add(std::move(child));
  node(parent).children.push_back(id);
}

void StepTree::set_target(Id id, Completion step) {
  Node& n = node(id);
  n.target = std::move(step);
  n.verification = Progress::kDone;
}

void StepTree::advance_to(Id child) {
  SEED_CHECK(contains(child), kInternal) << "step tree: no node " << child;
  std::map<Id, Node> kept;
  std::vector<Id> stack = {child};
  while (!stack.empty()) {
    const Id id = stack.back();
    stack.pop_back();
    auto found = nodes_.find(id);
    stack.insert(stack.end(), found->second.children.begin(), found->second.children.end());
    kept.insert(nodes_.extract(found));
  }
  nodes_ = std::move(kept);
  root_ = child;
}

void StepTree::restart(std::vector<int32_t> committed) {
  const int depth = nodes_.empty() ? 0 : node(root_).depth + 1;
  nodes_.clear();
  Node root;
  root.path = std::move(committed);
  root.depth = depth;
  root_ = add(std::move(root));
}

}  // namespace seed::spec
