// Chain of thought: one sampled chain from the task's cot prompt, the
// baseline every scaling curve starts from.
#include "search/search_algorithms.h"
#include "search/search_context.h"

namespace seed::search {
namespace {

class CotSearch : public Search {
 public:
  explicit CotSearch(const SearchConfig& config) : config_(config) {}
  std::string name() const override { return "cot"; }

  SearchResult solve(const tasks::Task& task, const tasks::Problem& problem, spec::Engine& engine) const override {
    SearchContext ctx(task, problem, engine, config_.seed);
    const std::vector<int> chains = ctx.sample_chains(1);
    SearchResult result;
    result.answer = ctx.answer(chains.front());
    result.usage = ctx.usage();
    result.tree = std::move(ctx.tree());
    return result;
  }

 private:
  SearchConfig config_;
};

}  // namespace

std::unique_ptr<Search> make_cot_search(const SearchConfig& config) { return std::make_unique<CotSearch>(config); }

}  // namespace seed::search
