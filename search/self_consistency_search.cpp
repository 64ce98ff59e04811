// Self-consistency (Wang et al., 2023): `samples` chains of thought (one
// batch); the answer the most chains reach wins (as the task's checker
// extracts it, without the gold answer). Ties go to the answer reached
// first; chains with no extractable answer do not vote.
#include <map>

#include "search/search_algorithms.h"

namespace seed::search {

int run_self_consistency(SearchContext& ctx, const tasks::SearchParams& params) {
  const tasks::Checker& checker = ctx.task().checker();
  const std::vector<int> chains = ctx.sample_chains(params.samples);
  std::map<std::string, int> votes;
  std::map<std::string, int> first_chain;
  int best = chains.front();
  int best_votes = 0;
  for (const int id : chains) {
    const std::string answer = checker.extract(ctx.tree().node(id).thought.text);
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
    const auto it = votes.find(checker.extract(ctx.tree().node(id).thought.text));
    if (it != votes.end()) ctx.tree().node(id).value = it->second;
  }
  return best;
}

}  // namespace seed::search
