// make_search: algorithms by name (the CLI value, registry key and results
// field share one spelling).
#include "models/base/error.h"
#include "search/search_algorithms.h"

namespace seed::search {
namespace {

struct Entry {
  const char* name;
  Algorithm run;
  int (*requests_per_step)(const tasks::SearchParams& params);  // Search::requests_per_step
  bool samples_chains;  // from the task's cot prompt
  bool scores_chains;   // by the task's evaluator, each chain as a whole
};

int one(const tasks::SearchParams&) { return 1; }
int samples(const tasks::SearchParams& p) { return p.samples; }
int thoughts_per_level(const tasks::SearchParams& p) { return p.n * p.b; }
int beams(const tasks::SearchParams& p) { return p.beams; }
int parallel(const tasks::SearchParams& p) { return p.parallel; }

const Entry kAlgorithms[] = {
    {"cot", run_cot, one, true, false},
    {"best-of-n", run_best_of_n, samples, true, true},
    {"weighted-best-of-n", run_weighted_best_of_n, samples, true, true},
    {"self-consistency", run_self_consistency, samples, true, false},
    {"bfs", run_bfs, thoughts_per_level, false, false},
    {"dvts", run_dvts, beams, false, false},
    {"mcts", run_mcts, parallel, false, false},
};

// Every algorithm's solve(): a fresh context, the algorithm, then the answer
// from the node it chose.
class AlgorithmSearch : public Search {
 public:
  AlgorithmSearch(const Entry& entry, const SearchConfig& config) : entry_(entry), config_(config) {}
  std::string name() const override { return entry_.name; }
  int requests_per_step() const override { return entry_.requests_per_step(config_.params); }

  void check(const tasks::Task& task) const override {
    SEED_CHECK(!entry_.samples_chains || task.spec().cot.has_value(), kInvalidArgument)
        << task.folder() << "/task.json: the task has no 'cot' prompt, which " << entry_.name
        << " samples its chains of thought from";
    if (entry_.scores_chains) task.check_scores_chains(entry_.name);
  }

  SearchResult solve(const tasks::Task& task, const tasks::Problem& problem, spec::Engine& engine,
                     spec::StepScorer* scorer) const override {
    check(task);
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
