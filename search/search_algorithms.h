// The algorithms behind make_search (search.h), one per file. Internal to
// search/.
//
// An algorithm is a function over one solve()'s SearchContext: it grows the
// tree through the context's batched operations and returns the node the
// answer is written from. What every solve() shares (the context, writing
// the answer, handing back the tree and usage) lives once, in
// search_registry.cpp.
#pragma once

#include "search/search_context.h"

namespace seed::search {

// REQUIRES params passed SearchParams::validate. Returns a node id of ctx.tree().
using Algorithm = int (*)(SearchContext& ctx, const tasks::SearchParams& params);

int run_bfs(SearchContext& ctx, const tasks::SearchParams& params);
int run_dvts(SearchContext& ctx, const tasks::SearchParams& params);
int run_mcts(SearchContext& ctx, const tasks::SearchParams& params);
int run_cot(SearchContext& ctx, const tasks::SearchParams& params);
int run_best_of_n(SearchContext& ctx, const tasks::SearchParams& params);
int run_weighted_best_of_n(SearchContext& ctx, const tasks::SearchParams& params);
int run_self_consistency(SearchContext& ctx, const tasks::SearchParams& params);

}  // namespace seed::search
