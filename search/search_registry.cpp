// make_search: algorithms by name (the CLI value, registry key and results
// field share one spelling).
#include "models/error.h"
#include "search/search_algorithms.h"

namespace seed::search {
namespace {

struct Entry {
  const char* name;
  std::unique_ptr<Search> (*make)(const SearchConfig&);
};

const Entry kAlgorithms[] = {
    {"cot", make_cot_search},
    {"best-of-n", make_best_of_n_search},
    {"self-consistency", make_self_consistency_search},
    {"bfs", make_bfs_search},
    {"dvts", make_dvts_search},
    {"mcts", make_mcts_search},
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
    if (config.algorithm == e.name) return e.make(config);
  }
  std::string known;
  for (const std::string& name : search_names()) known += (known.empty() ? "" : ", ") + name;
  SEED_FAIL(kInvalidArgument) << "unknown search '" << config.algorithm << "' (known: " << known << ")";
}

}  // namespace seed::search
