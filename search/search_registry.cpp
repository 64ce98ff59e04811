// make_search: algorithms by name (the CLI value, registry key and results
// field share one spelling).
#include "models/base/error.h"
#include "search/search_algorithms.h"

namespace seed::search {
namespace {

struct Entry {
  const char* name;
  Algorithm run;
};

const Entry kAlgorithms[] = {
    {"cot", run_cot},
    {"best-of-n", run_best_of_n},
    {"weighted-best-of-n", run_weighted_best_of_n},
    {"self-consistency", run_self_consistency},
    {"bfs", run_bfs},
    {"dvts", run_dvts},
    {"mcts", run_mcts},
};

// Every algorithm's solve(): a fresh context, the algorithm, then the answer
// from the node it chose.
class AlgorithmSearch : public Search {
 public:
  AlgorithmSearch(const Entry& entry, const SearchConfig& config) : entry_(entry), config_(config) {}
  std::string name() const override { return entry_.name; }

  SearchResult solve(const tasks::Task& task, const tasks::Problem& problem, spec::Engine& engine,
                     spec::StepScorer* scorer) const override {
    SearchContext ctx(task, problem, engine, config_.seed, scorer);
    const int chosen = entry_.run(ctx, config_.params);
    SearchResult result;
    result.answer = ctx.answer(chosen);
    result.usage = ctx.usage();
    result.tree = std::move(ctx.tree());
    return result;
  }

 private:
  const Entry& entry_;  // an element of kAlgorithms (static)
  SearchConfig config_;
};

}  // namespace

const std::vector<std::string>& search_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const Entry& e : kAlgorithms) out.push_back(e.name);
    return out;
  }();
  return names;
}

std::unique_ptr<Search> make_search(const SearchConfig& config) {
  config.params.validate("search parameter '");
  for (const Entry& e : kAlgorithms) {
    if (config.algorithm == e.name) return std::make_unique<AlgorithmSearch>(e, config);
  }
  std::string known;
  for (const std::string& name : search_names()) known += (known.empty() ? "" : ", ") + name;
  SEED_FAIL(kInvalidArgument) << "unknown search '" << config.algorithm << "' (known: " << known << ")";
}

}  // namespace seed::search
