// Tree-of-Thoughts BFS, as the SEED paper's Algorithm 2 runs it:
//
//   S_0 = {root}
//   for i = 1..T:
//     S'_i = children of every non-final state of S_{i-1}, n each  (one batch)
//     E_i  = the evaluator's value of each state of S'_i            (one batch)
//     S_i  = the b best of S'_i, plus S_{i-1}'s final states competing
//   answer = G(best state of S_T, 1)                                (one request)
//
// Between equal values a final state (its path complete) ranks first, then
// the earlier node (lower id), so the order is a pure function of the
// completions.
#include <algorithm>

#include "search/search_algorithms.h"

namespace seed::search {

int run_bfs(SearchContext& ctx, const tasks::SearchParams& p) {
  std::vector<int> frontier = {0};
  for (int step = 1; step <= p.depth; ++step) {
    std::vector<int> open, candidates;
    for (const int id : frontier) {
      (ctx.tree().node(id).final ? candidates : open).push_back(id);
    }
    if (open.empty()) break;
    const std::vector<int> children = ctx.expand(open, p.n);
    ctx.evaluate(children);
    candidates.insert(candidates.end(), children.begin(), children.end());
    if (candidates.empty()) break;  // nothing could be generated: keep the last level
    std::sort(candidates.begin(), candidates.end(),
              [&](int a, int b) { return ranks_above(ctx.tree().node(a), ctx.tree().node(b)); });
    if (static_cast<int>(candidates.size()) > p.b) candidates.resize(p.b);
    for (const int id : candidates) ctx.tree().node(id).kept = true;
    frontier = candidates;
  }
  return frontier.front();
}

}  // namespace seed::search
