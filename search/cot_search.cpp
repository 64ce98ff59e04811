// Chain of thought: one sampled chain from the task's cot prompt, the
// baseline every scaling curve starts from.
#include "search/search_algorithms.h"

namespace seed::search {

int run_cot(SearchContext& ctx, const tasks::SearchParams&) { return ctx.sample_chains(1).front(); }

}  // namespace seed::search
