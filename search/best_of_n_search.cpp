// Best-of-N: `samples` chains of thought (one batch), each scored by the
// task's evaluator as a state (one batch); the best chain answers, ties to
// the earlier chain.
#include "search/search_algorithms.h"
#include "search/search_context.h"

namespace seed::search {
namespace {

class BestOfNSearch : public Search {
 public:
  explicit BestOfNSearch(const SearchConfig& config) : config_(config) {}
  std::string name() const override { return "best-of-n"; }

  SearchResult solve(const tasks::Task& task, const tasks::Problem& problem, spec::Engine& engine) const override {
    SearchContext ctx(task, problem, engine, config_.seed);
    const std::vector<int> chains = ctx.sample_chains(config_.params.samples);
    ctx.evaluate(chains);
    int best = chains.front();
    for (const int id : chains) {
      if (ranks_above(ctx.tree().node(id), ctx.tree().node(best))) best = id;
    }
    SearchResult result;
    result.answer = ctx.answer(best);
    result.usage = ctx.usage();
    result.tree = std::move(ctx.tree());
    return result;
  }

 private:
  SearchConfig config_;
};

}  // namespace

std::unique_ptr<Search> make_best_of_n_search(const SearchConfig& config) {
  return std::make_unique<BestOfNSearch>(config);
}

}  // namespace seed::search
