// PRM-weighted best-of-N (search-and-learn's "weighted" selection):
// `samples` chains of thought (one batch), each scored by the task's
// evaluator (one batch; a process reward model's aggregate, in [0, 1]);
// every chain votes for its answer (as the checker extracts it) with its
// score, and the answer with the largest total wins, written from its
// best-scored chain. Ties go to the answer reached first; chains with no
// answer do not vote.
#include <map>
#include <string>
#include <vector>

#include "search/search_algorithms.h"

namespace seed::search {

int run_weighted_best_of_n(SearchContext& ctx, const tasks::SearchParams& params) {
  const std::vector<int> chains = ctx.sample_chains(params.samples);
  ctx.evaluate(chains);
  const tasks::Checker& checker = ctx.task().checker();
  std::vector<std::string> answers;  // in the order first reached
  std::map<std::string, double> weight;
  std::map<std::string, int> best_chain;
  for (const int id : chains) {
    const std::string answer = checker.extract(ctx.tree().node(id).thought.text);
    if (answer.empty()) continue;
    weight[answer] += ctx.normalized_value(id);
    const auto [at, added] = best_chain.emplace(answer, id);
    if (added) answers.push_back(answer);
    if (!added && ranks_above(ctx.tree().node(id), ctx.tree().node(at->second))) at->second = id;
  }
  if (answers.empty()) return chains.front();
  std::string winner = answers.front();
  for (const std::string& answer : answers) {
    if (weight[answer] > weight[winner]) winner = answer;
  }
  return best_chain.at(winner);
}

}  // namespace seed::search
