// The constructors behind make_search (search.h), one per algorithm file.
// Internal to search/.
#pragma once

#include <memory>

#include "search/search.h"

namespace seed::search {

std::unique_ptr<Search> make_bfs_search(const SearchConfig& config);
std::unique_ptr<Search> make_dvts_search(const SearchConfig& config);
std::unique_ptr<Search> make_mcts_search(const SearchConfig& config);
std::unique_ptr<Search> make_cot_search(const SearchConfig& config);
std::unique_ptr<Search> make_best_of_n_search(const SearchConfig& config);
std::unique_ptr<Search> make_self_consistency_search(const SearchConfig& config);

}  // namespace seed::search
