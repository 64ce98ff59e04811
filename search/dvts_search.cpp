// Diverse verifier tree search (Beeching et al., search-and-learn): N beams
// split into N/M independent subtrees of width M.
//
//   step 1: the root's N thoughts (one batch), dealt to the subtrees in turn
//           (thought i to subtree i mod N/M); all evaluated (one batch); each
//           subtree keeps its best
//   step t: every subtree whose kept state is not final expands it into M
//           thoughts (one batch for all subtrees), all evaluated (one batch),
//           each subtree keeps its best child
//   answer: from the best kept state over the subtrees
//
// Subtrees never compare with each other before the end, which is what keeps
// them diverse. Candidates rank by ranks_above (search_tree.h).
#include "search/search_algorithms.h"

namespace seed::search {
namespace {

// Each subtree with candidates among `nodes` moves to its best one.
void keep_best(SearchContext& ctx, const std::vector<int>& nodes, std::vector<int>* kept) {
  std::vector<int> best(kept->size(), -1);
  for (const int id : nodes) {
    const Node& n = ctx.tree().node(id);
    int& b = best[n.subtree];
    if (b < 0 || ranks_above(n, ctx.tree().node(b))) b = id;
  }
  for (size_t s = 0; s < kept->size(); ++s) {
    if (best[s] < 0) continue;
    (*kept)[s] = best[s];
    ctx.tree().node(best[s]).kept = true;
  }
}

}  // namespace

int run_dvts(SearchContext& ctx, const tasks::SearchParams& p) {
  const int subtrees = p.beams / p.beam_width;
  SearchTree& tree = ctx.tree();
  std::vector<int> kept(subtrees, -1);  // each subtree's current state

  const std::vector<int> first = ctx.expand({0}, p.beams);
  ctx.evaluate(first);
  for (size_t i = 0; i < first.size(); ++i) tree.node(first[i]).subtree = static_cast<int>(i) % subtrees;
  keep_best(ctx, first, &kept);

  for (int step = 2; step <= p.depth; ++step) {
    std::vector<int> open;
    for (const int id : kept) {
      if (id >= 0 && !tree.node(id).final) open.push_back(id);
    }
    if (open.empty()) break;
    const std::vector<int> children = ctx.expand(open, p.beam_width);
    for (const int id : children) tree.node(id).subtree = tree.node(tree.node(id).parent).subtree;
    ctx.evaluate(children);
    keep_best(ctx, children, &kept);
  }

  int best = -1;
  for (const int id : kept) {
    if (id >= 0 && (best < 0 || ranks_above(tree.node(id), tree.node(best)))) best = id;
  }
  return best < 0 ? 0 : best;
}

}  // namespace seed::search
