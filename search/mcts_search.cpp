// Monte Carlo tree search over thoughts, in rounds of `parallel` simulations
// so that each round's expansions and evaluations go to the engine as one
// batch each:
//
//   select    from the root, repeatedly the child with the highest score
//             until a node that is unexpanded or terminal (final, at depth
//             T, or expanded without children). Scores (Q in [0, 1]):
//               uct   unvisited children first (best evaluator value
//                     first), else Q + c * sqrt(ln N(parent) / N(child))
//               puct  Q + c * P * sqrt(N(parent)) / (1 + N(child)), with
//                     P the child's share of its siblings' values
//             where Q is the mean backed-up value, or the child's own
//             normalised evaluator value while unvisited. Each selection
//             adds a virtual loss (one visit of value 0) along its path, so
//             the next selection of the round looks elsewhere; a leaf
//             picked twice in a round is simulated once.
//   expand    every selected non-terminal leaf into n thoughts (one batch;
//             each request's priority is the score that selected its leaf)
//   evaluate  the new children by the task's evaluator (one batch); with
//             rollout_depth > 0 each child's value is instead the value
//             after that many greedy thoughts below it (off the tree)
//   backup    v = the best new child's value (a terminal leaf: its own
//             value) added along the path; virtual losses removed
//
// The answer comes from the best-valued terminal node found (ties: a final
// node, then more visits, then the earlier node), or the end of the most-visited path if
// no terminal node was reached.
#include <cmath>
#include <map>
#include <set>

#include "search/search_algorithms.h"

namespace seed::search {
namespace {

constexpr double kVirtualLoss = 1.0;  // visits of value 0 added per in-flight selection

// One solve(): the tree's statistics live in its nodes, rollout values here.
class MctsRun {
 public:
  MctsRun(SearchContext& ctx, const tasks::SearchParams& params) : ctx_(ctx), p_(params) {}

  int run() {
    SearchTree& tree = ctx_.tree();
    int done = 0;
    while (done < p_.simulations) {
      std::vector<double> virtual_visits(tree.size(), 0);
      std::vector<std::vector<int>> paths;
      std::vector<double> scores;  // per path: the score that selected its leaf
      std::set<int> leaves;
      for (int s = 0; s < p_.parallel && done < p_.simulations; ++s, ++done) {
        double score = 0;
        std::vector<int> path = select(virtual_visits, score);
        for (const int id : path) virtual_visits[id] += kVirtualLoss;
        if (leaves.insert(path.back()).second) {
          paths.push_back(std::move(path));
          scores.push_back(score);
        }
      }
      std::vector<int> to_expand;
      std::vector<double> priorities;
      for (size_t i = 0; i < paths.size(); ++i) {
        if (is_terminal(paths[i].back())) continue;
        to_expand.push_back(paths[i].back());
        priorities.push_back(scores[i]);
      }
      // The engine serves the most promising selections first.
      const std::vector<int> children = ctx_.expand(to_expand, p_.n, priorities);
      ctx_.evaluate(children);
      if (p_.rollout_depth > 0) {
        const std::vector<double> rolled = ctx_.rollout(children, p_.rollout_depth, p_.depth);
        for (size_t i = 0; i < children.size(); ++i) rollout_value_[children[i]] = rolled[i];
      }
      set_priors(to_expand);
      for (const auto& path : paths) backup(path);
    }
    return choose();
  }

 private:
  bool is_terminal(int id) const {
    const Node& n = ctx_.tree().node(id);
    return ctx_.terminal(id, p_.depth) || (n.expanded && n.children.empty());
  }

  // A node's value estimate before any visit: its rollout or its evaluation.
  double leaf_value(int id) const {
    const auto it = rollout_value_.find(id);
    return it != rollout_value_.end() ? it->second : ctx_.normalized_value(id);
  }

  // The path to the next leaf to simulate; `leaf_score`: the score that
  // selected the leaf among its siblings (0 for the root).
  std::vector<int> select(const std::vector<double>& virtual_visits, double& leaf_score) const {
    const SearchTree& tree = ctx_.tree();
    std::vector<int> path = {0};
    leaf_score = 0;
    while (true) {
      const int at = path.back();
      const Node& n = tree.node(at);
      if (!n.expanded || is_terminal(at)) return path;
      const double parent_visits = n.visits + virtual_visits[at];
      int best = -1;
      double best_score = 0;
      for (const int c : n.children) {
        const Node& child = tree.node(c);
        const double visits = child.visits + virtual_visits[c];
        const double q = visits > 0 ? child.value_sum / visits : leaf_value(c);
        double score;
        if (p_.selection == "uct") {
          score = visits == 0 ? 2.0 + q  // unvisited first, best value first (Q <= 1)
                              : q + p_.c_puct * std::sqrt(std::log(std::max(parent_visits, 1.0)) / visits);
        } else {
          score = q + p_.c_puct * child.prior * std::sqrt(parent_visits) / (1.0 + visits);
        }
        if (best < 0 || score > best_score) {
          best = c;
          best_score = score;
        }
      }
      path.push_back(best);
      leaf_score = best_score;
    }
  }

  void set_priors(const std::vector<int>& parents) {
    for (const int parent : parents) {
      const std::vector<int>& children = ctx_.tree().node(parent).children;
      double sum = 0;
      for (const int c : children) sum += ctx_.normalized_value(c);
      for (const int c : children) {
        ctx_.tree().node(c).prior =
            sum > 0 ? ctx_.normalized_value(c) / sum : 1.0 / static_cast<double>(children.size());
      }
    }
  }

  void backup(const std::vector<int>& path) {
    const Node& leaf = ctx_.tree().node(path.back());
    double v = 0;
    if (leaf.children.empty()) {
      v = path.back() == 0 ? 0 : leaf_value(path.back());
    } else {
      for (const int c : leaf.children) v = std::max(v, leaf_value(c));
    }
    for (const int id : path) {
      Node& n = ctx_.tree().node(id);
      n.visits += 1;
      n.value_sum += v;
    }
  }

  int choose() const {
    const SearchTree& tree = ctx_.tree();
    int best = -1;
    for (int id = 1; id < tree.size(); ++id) {
      if (!ctx_.terminal(id, p_.depth)) continue;
      if (best < 0) {
        best = id;
        continue;
      }
      const Node& n = tree.node(id);
      const Node& b = tree.node(best);
      const double v = ctx_.normalized_value(id), bv = ctx_.normalized_value(best);
      if (v != bv ? v > bv : n.final != b.final ? n.final : n.visits > b.visits) best = id;
    }
    if (best >= 0) return best;
    int at = 0;
    while (!tree.node(at).children.empty()) {
      int next = tree.node(at).children.front();
      for (const int c : tree.node(at).children) {
        if (tree.node(c).visits > tree.node(next).visits) next = c;
      }
      at = next;
    }
    return at;
  }

  SearchContext& ctx_;
  const tasks::SearchParams& p_;
  std::map<int, double> rollout_value_;
};

}  // namespace

int run_mcts(SearchContext& ctx, const tasks::SearchParams& params) { return MctsRun(ctx, params).run(); }

}  // namespace seed::search
