#include "search/search_tree.h"

#include <algorithm>

#include "models/base/error.h"

namespace seed::search {

SearchTree::SearchTree() { nodes_.emplace_back(); }

int SearchTree::add_child(int parent, tasks::Thought thought) {
  SEED_CHECK(parent >= 0 && parent < size(), kInternal) << "search tree: no node " << parent;
  Node child;
  child.id = size();
  child.parent = parent;
  child.depth = nodes_[parent].depth + 1;
  child.thought = std::move(thought);
  nodes_[parent].children.push_back(child.id);
  nodes_.push_back(std::move(child));
  return nodes_.back().id;
}

Node& SearchTree::node(int id) {
  SEED_CHECK(id >= 0 && id < size(), kInternal) << "search tree: no node " << id;
  return nodes_[id];
}

const Node& SearchTree::node(int id) const {
  SEED_CHECK(id >= 0 && id < size(), kInternal) << "search tree: no node " << id;
  return nodes_[id];
}

std::vector<int> SearchTree::path(int id) const {
  std::vector<int> ids;
  for (int at = id; at >= 0; at = node(at).parent) ids.push_back(at);
  std::reverse(ids.begin(), ids.end());
  return ids;
}

void SearchTree::set_chosen(int id) {
  node(id);  // checks the id
  chosen_ = id;
}

TreeSummary SearchTree::summary() const {
  TreeSummary s;
  s.nodes = size();
  for (const Node& n : nodes_) {
    s.expanded += n.expanded ? 1 : 0;
    s.evaluated += n.value.has_value() ? 1 : 0;
    s.max_depth = std::max(s.max_depth, n.depth);
  }
  s.chosen_depth = chosen_ >= 0 ? nodes_[chosen_].depth : -1;
  return s;
}

nlohmann::json SearchTree::to_json() const {
  nlohmann::json nodes = nlohmann::json::array();
  for (const Node& n : nodes_) {
    nlohmann::json j = {{"id", n.id}, {"parent", n.parent}, {"depth", n.depth}, {"thought", n.thought.text}};
    if (n.thought.parts.size() > 1) j["parts"] = n.thought.parts;
    j["value"] = n.value.has_value() ? nlohmann::json(*n.value) : nlohmann::json(nullptr);
    j["expanded"] = n.expanded;
    j["final"] = n.final;
    if (n.order >= 0) j["order"] = n.order;
    if (n.subtree >= 0) j["subtree"] = n.subtree;
    if (n.visits > 0) {
      j["visits"] = n.visits;
      j["q"] = n.value_sum / n.visits;
    }
    if (n.kept) j["kept"] = true;
    nodes.push_back(std::move(j));
  }
  nlohmann::json chosen = nlohmann::json::array();
  if (chosen_ >= 0) {
    for (const int id : path(chosen_)) chosen.push_back(id);
  }
  return {{"nodes", std::move(nodes)}, {"chosen_path", std::move(chosen)}};
}

}  // namespace seed::search
