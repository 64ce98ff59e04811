#include "spec/drafters/stand/static_tree.h"

#include <cstdint>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <queue>

#include "models/base/error.h"

namespace seed::spec {
namespace {

constexpr const char* kFormat = "seed-static-tree";
constexpr int kVersion = 1;

std::vector<std::vector<int32_t>> children_of(const StaticTree& tree) {
  std::vector<std::vector<int32_t>> children(static_cast<size_t>(tree.size()) + 1);  // [0] = the prefix
  for (int32_t i = 0; i < tree.size(); ++i) {
    children[static_cast<size_t>(tree.parents[static_cast<size_t>(i)] + 1)].push_back(i);
  }
  return children;
}

}  // namespace

std::vector<int> StaticTree::depths() const {
  std::vector<int> d(parents.size());
  for (size_t i = 0; i < parents.size(); ++i) d[i] = parents[i] < 0 ? 1 : d[static_cast<size_t>(parents[i])] + 1;
  return d;
}

int StaticTree::depth() const {
  const std::vector<int> d = depths();
  return d.empty() ? 0 : *std::max_element(d.begin(), d.end());
}

std::vector<int> StaticTree::nodes_per_depth() const {
  std::vector<int> counts(static_cast<size_t>(depth()) + 1, 0);
  counts[0] = 1;
  for (const int d : depths()) ++counts[static_cast<size_t>(d)];
  return counts;
}

StaticTree StaticTree::from_k_config(const std::vector<int>& k_config) {
  StaticTree tree;
  std::vector<int32_t> level = {-1};
  for (const int k : k_config) {
    std::vector<int32_t> next;
    for (const int32_t parent : level) {
      for (int c = 0; c < k; ++c) {
        next.push_back(tree.size());
        tree.parents.push_back(parent);
      }
    }
    level = std::move(next);
  }
  return tree;
}

StaticTree StaticTree::initial() {
  // Algorithm 1 as the notes give it: the children of a node depend on its
  // depth, its rank among its siblings (`order`) and its parent's child
  // count; the leftmost node of every level gets at least 3.
  struct Node { int32_t id; int depth; int order; int parent_children; };
  constexpr int kMaxDepth = 20;
  StaticTree tree;
  std::vector<Node> active = {{-1, 0, 0, 0}};
  for (int depth = 0; depth < kMaxDepth; ++depth) {
    std::vector<Node> next;
    for (size_t i = 0; i < active.size(); ++i) {
      const Node& node = active[i];
      int n = 0;
      const double shrink = std::ceil((node.parent_children - 1) / (node.order * 0.7 + 1));
      if (node.depth == 0) {
        n = 8;
      } else if (node.depth == 1) {
        n = std::max(8 - 2 * node.order, 1);
      } else if (node.depth <= 3) {
        n = std::max(static_cast<int>(shrink), 2);
      } else {
        n = std::max(static_cast<int>(shrink), 0);
      }
      if (i == 0) n = std::max(n, 3);
      for (int c = 0; c < n; ++c) {
        next.push_back({tree.size(), node.depth + 1, c, n});
        tree.parents.push_back(node.id);
      }
    }
    active = std::move(next);
  }
  return tree;
}

StaticTree StaticTree::pruned(const std::vector<int64_t>& counts, int keep) const {
  SEED_CHECK(counts.size() == parents.size(), kInvalidArgument)
      << "static tree: " << counts.size() << " counts for " << parents.size() << " nodes";
  const std::vector<std::vector<int32_t>> children = children_of(*this);
  const std::vector<int> d = depths();
  const auto worse = [&](int32_t a, int32_t b) {
    const size_t ua = static_cast<size_t>(a), ub = static_cast<size_t>(b);
    if (counts[ua] != counts[ub]) return counts[ua] < counts[ub];
    if (d[ua] != d[ub]) return d[ua] > d[ub];
    return a > b;
  };
  std::priority_queue<int32_t, std::vector<int32_t>, decltype(worse)> frontier(worse);
  for (const int32_t c : children[0]) frontier.push(c);
  std::vector<bool> kept(parents.size(), false);
  for (int taken = 0; taken < keep && !frontier.empty(); ++taken) {
    const int32_t node = frontier.top();
    frontier.pop();
    kept[static_cast<size_t>(node)] = true;
    for (const int32_t c : children[static_cast<size_t>(node) + 1]) frontier.push(c);
  }
  // Breadth-first renumbering, siblings in their old order.
  StaticTree out;
  std::vector<int32_t> renamed(parents.size(), -1);
  std::queue<int32_t> open;  // old ids; -1 = the prefix
  open.push(-1);
  while (!open.empty()) {
    const int32_t at = open.front();
    open.pop();
    for (const int32_t c : children[static_cast<size_t>(at + 1)]) {
      if (!kept[static_cast<size_t>(c)]) continue;
      renamed[static_cast<size_t>(c)] = out.size();
      out.parents.push_back(at < 0 ? -1 : renamed[static_cast<size_t>(at)]);
      open.push(c);
    }
  }
  return out;
}

StaticTree StaticTree::load(const std::string& path) {
  std::ifstream in(path);
  SEED_CHECK(in.good(), kIo) << "static tree: cannot read " << path;
  nlohmann::json j;
  try {
    in >> j;
  } catch (const nlohmann::json::exception& e) {
    SEED_FAIL(kInvalidArgument) << "static tree " << path << ": not JSON (" << e.what() << ")";
  }
  SEED_CHECK(j.is_object() && j.value("format", "") == kFormat, kInvalidArgument)
      << "static tree " << path << ": field 'format' must be \"" << kFormat << "\"";
  SEED_CHECK(j.value("version", 0) == kVersion, kInvalidArgument)
      << "static tree " << path << ": field 'version' must be " << kVersion;
  SEED_CHECK(j.contains("parents") && j["parents"].is_array(), kInvalidArgument)
      << "static tree " << path << ": field 'parents' must be an array of node indices";
  StaticTree tree;
  for (const nlohmann::json& p : j["parents"]) {
    SEED_CHECK(p.is_number_integer(), kInvalidArgument)
        << "static tree " << path << ": field 'parents' holds " << p.dump() << ", not an integer";
    const int64_t parent = p.get<int64_t>();
    SEED_CHECK(parent >= -1 && parent < tree.size(), kInvalidArgument)
        << "static tree " << path << ": field 'parents'[" << tree.size() << "] is " << parent
        << "; a parent must be -1 (the prefix) or an earlier node";
    tree.parents.push_back(static_cast<int32_t>(parent));
  }
  return tree;
}

void StaticTree::save(const std::string& path) const {
  std::ofstream out(path);
  out << nlohmann::json{{"format", kFormat}, {"version", kVersion}, {"parents", parents}}.dump() << "\n";
  SEED_CHECK(out.good(), kIo) << "static tree: cannot write " << path;
}

}  // namespace seed::spec
