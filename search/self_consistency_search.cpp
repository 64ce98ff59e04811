// Self-consistency (Wang et al., 2023): `samples` chains of thought (one
// batch); the answer the most chains reach wins (as the task's checker
// extracts it, without the gold answer). Ties go to the answer reached
// first; chains with no extractable answer do not vote.
#include <map>

#include "search/search_algorithms.h"
#include "search/search_context.h"

namespace seed::search {
namespace {

class SelfConsistencySearch : public Search {
 public:
  explicit SelfConsistencySearch(const SearchConfig& config) : config_(config) {}
  std::string name() const override { return "self-consistency"; }

  SearchResult solve(const tasks::Task& task, const tasks::Problem& problem, spec::Engine& engine) const override {
    SearchContext ctx(task, problem, engine, config_.seed);
    const std::vector<int> chains = ctx.sample_chains(config_.params.samples);
    std::map<std::string, int> votes;
    std::map<std::string, int> first_chain;
    int best = chains.front();
    int best_votes = 0;
    for (const int id : chains) {
      const std::string answer = task.checker().extract(ctx.tree().node(id).thought.text);
      if (answer.empty()) continue;
      first_chain.emplace(answer, id);
      ++votes[answer];
      // Strictly more votes, so a tie stays with the answer reached first.
      if (votes[answer] > best_votes) {
        best_votes = votes[answer];
        best = first_chain[answer];
      }
    }
    for (const int id : chains) {  // each chain's value: the votes its answer got
      const auto it = votes.find(task.checker().extract(ctx.tree().node(id).thought.text));
      if (it != votes.end()) ctx.tree().node(id).value = it->second;
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

std::unique_ptr<Search> make_self_consistency_search(const SearchConfig& config) {
  return std::make_unique<SelfConsistencySearch>(config);
}

}  // namespace seed::search
