// Self-consistency (Wang et al., 2023): `samples` chains of thought (one
// batch); the answer the most chains reach wins (as the task's checker
// extracts it, without the gold answer). Ties go to the answer reached
// first; chains with no extractable answer do not vote.
// With early_stop, sampling stops once the leading answer has more votes
// than any other could reach if every chain still running voted for it: the
// full vote could only pick that answer, so the rest are cancelled.
#include <algorithm>
#include <map>

#include "search/search_algorithms.h"

namespace seed::search {

namespace {

// The votes of the chains completed so far, in completion order.
class VoteTally {
 public:
  explicit VoteTally(int chains) : left_(chains) {}
  // Counts one completed chain's answer ("" does not vote); true once the
  // winner is decided.
  bool add(const std::string& answer) {
    --left_;
    if (!answer.empty()) ++votes_[answer];
    int first = 0, second = 0;
    for (const auto& [a, v] : votes_) {
      if (v > first) {
        second = first;
        first = v;
      } else {
        second = std::max(second, v);
      }
    }
    return first > second + left_;
  }

 private:
  int left_;
  std::map<std::string, int> votes_;
};

}  // namespace

int run_self_consistency(SearchContext& ctx, const tasks::SearchParams& params) {
  const tasks::Checker& checker = ctx.task().checker();
  VoteTally tally(params.samples);
  const auto decided = [&](const std::string& text) { return tally.add(checker.extract(text)); };
  const std::vector<int> chains =
      params.early_stop ? ctx.sample_chains(params.samples, decided) : ctx.sample_chains(params.samples);
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
