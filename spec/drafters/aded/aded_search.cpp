#include "spec/drafters/aded/aded_search.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <unordered_map>

#include "models/base/error.h"

namespace seed::spec {
namespace {

struct Node {
  int32_t a = 0, b = 0;  // the context this node stands for; b is its token
  int parent = -1;
  std::vector<int> children;
  int visits = 0;
  double score = 0;  // sum of rewards
  double prior = 0;  // M[parent's context][b]
  bool expanded = false;
};

struct Context {
  int32_t a, b;
};

// Rows looked up once per search (the table is shared and locked).
class RowCache {
 public:
  explicit RowCache(const TrigramRows& rows) : rows_(rows) {}
  const std::vector<TrigramSuccessor>& get(int32_t a, int32_t b) {
    const uint64_t k = TrigramTable::key(a, b);
    auto it = cache_.find(k);
    if (it == cache_.end()) it = cache_.emplace(k, rows_(a, b)).first;
    return it->second;
  }
  float value(Context c, int32_t next) {
    for (const TrigramSuccessor& s : get(c.a, c.b)) {
      if (s.token == next) return s.weight;
    }
    return 0;
  }

 private:
  const TrigramRows& rows_;
  std::unordered_map<uint64_t, std::vector<TrigramSuccessor>> cache_;
};

int select_child(const std::vector<Node>& nodes, int parent, const AdedSearchOptions& o) {
  const Node& p = nodes[static_cast<size_t>(parent)];
  const double n = p.visits;
  const double explore = aded_exploration(n, o.c1, o.c2) * std::sqrt(n);
  int best = -1;
  double best_score = -std::numeric_limits<double>::infinity();
  for (const int c : p.children) {
    const Node& child = nodes[static_cast<size_t>(c)];
    const double score = child.visits == 0 ? std::numeric_limits<double>::infinity()
                                           : child.score / child.visits + explore * child.prior / (1 + child.visits);
    if (score > best_score) {
      best = c;
      best_score = score;
    }
  }
  return best;
}

}  // namespace

double aded_exploration(double parent_visits, double c1, double c2) {
  return c1 + std::log((parent_visits + c2 + 1) / c2);
}

std::vector<AdedDraft> aded_search(const TrigramRows& rows, int32_t a, int32_t b, const AdedSearchOptions& o,
                                   const SearchUniform& uniform) {
  SEED_CHECK(o.iterations >= 1 && o.depth >= 2 && o.candidates >= 1 && o.c2 > 0, kInvalidArgument)
      << "aded search: iterations " << o.iterations << ", depth " << o.depth << ", candidates " << o.candidates
      << ", c2 " << o.c2 << " (expected >= 1, >= 2, >= 1, > 0)";
  RowCache cache(rows);
  if (cache.get(a, b).empty()) return {};
  std::vector<Node> nodes(1);
  nodes[0].a = a;
  nodes[0].b = b;
  const size_t depth = static_cast<size_t>(o.depth);
  std::vector<Context> state;
  for (int iteration = 0; iteration < o.iterations; ++iteration) {
    int node = 0;
    state.assign(1, {a, b});
    // Selection.
    while (!nodes[static_cast<size_t>(node)].children.empty() && state.size() < depth) {
      node = select_child(nodes, node, o);
      state.push_back({nodes[static_cast<size_t>(node)].a, nodes[static_cast<size_t>(node)].b});
    }
    // Expansion: every successor at once, then on through the first.
    if (state.size() < depth && !nodes[static_cast<size_t>(node)].expanded) {
      nodes[static_cast<size_t>(node)].expanded = true;
      const Context at = state.back();
      const std::vector<TrigramSuccessor>& next = cache.get(at.a, at.b);
      for (const TrigramSuccessor& s : next) {
        Node child;
        child.a = at.b;
        child.b = s.token;
        child.parent = node;
        child.prior = s.weight;
        nodes[static_cast<size_t>(node)].children.push_back(static_cast<int>(nodes.size()));
        nodes.push_back(std::move(child));
      }
      if (!next.empty()) {
        node = nodes[static_cast<size_t>(node)].children.front();
        state.push_back({nodes[static_cast<size_t>(node)].a, nodes[static_cast<size_t>(node)].b});
      }
    }
    // Simulation: successors drawn in proportion to their values.
    uint32_t draw = static_cast<uint32_t>(iteration) * static_cast<uint32_t>(o.depth);
    while (state.size() < depth) {
      const std::vector<TrigramSuccessor>& next = cache.get(state.back().a, state.back().b);
      if (next.empty()) break;
      double total = 0;
      for (const TrigramSuccessor& s : next) total += s.weight;
      double u = uniform(draw++) * total;
      int32_t token = next.back().token;
      for (const TrigramSuccessor& s : next) {
        if (u < s.weight) {
          token = s.token;
          break;
        }
        u -= s.weight;
      }
      state.push_back({state.back().b, token});
    }
    // Backpropagation.
    double reward = 1;
    for (size_t i = 0; i + 1 < state.size(); ++i) reward += cache.value(state[i], state[i + 1].b);
    for (int n = node; n >= 0; n = nodes[static_cast<size_t>(n)].parent) {
      ++nodes[static_cast<size_t>(n)].visits;
      nodes[static_cast<size_t>(n)].score += reward;
    }
  }

  // Every non-root node's path, depth first.
  std::vector<AdedDraft> drafts;
  std::vector<std::pair<int, std::vector<int32_t>>> stack;
  for (auto it = nodes[0].children.rbegin(); it != nodes[0].children.rend(); ++it) stack.push_back({*it, {}});
  while (!stack.empty()) {
    auto [node, path] = std::move(stack.back());
    stack.pop_back();
    const Node& n = nodes[static_cast<size_t>(node)];
    path.push_back(n.b);
    drafts.push_back({path, n.visits});
    for (auto it = n.children.rbegin(); it != n.children.rend(); ++it) stack.push_back({*it, path});
  }
  std::stable_sort(drafts.begin(), drafts.end(), [](const AdedDraft& x, const AdedDraft& y) { return x.visits > y.visits; });
  if (drafts.size() > static_cast<size_t>(o.candidates)) drafts.resize(static_cast<size_t>(o.candidates));
  for (AdedDraft& d : drafts) {
    const int32_t before = d.tokens.size() >= 2 ? d.tokens[d.tokens.size() - 2] : b;
    const std::vector<TrigramSuccessor>& next = cache.get(before, d.tokens.back());
    if (!next.empty()) d.tokens.push_back(next.front().token);
  }
  return drafts;
}

}  // namespace seed::spec
