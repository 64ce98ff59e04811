// Best-of-N: `samples` chains of thought (one batch), each scored by the
// task's evaluator as a state (one batch); the best chain answers, ties to
// the earlier chain.
#include "search/search_algorithms.h"

namespace seed::search {

int run_best_of_n(SearchContext& ctx, const tasks::SearchParams& params) {
  const std::vector<int> chains = ctx.sample_chains(params.samples);
  ctx.evaluate(chains);
  int best = chains.front();
  for (const int id : chains) {
    if (ranks_above(ctx.tree().node(id), ctx.tree().node(best))) best = id;
  }
  return best;
}

}  // namespace seed::search
