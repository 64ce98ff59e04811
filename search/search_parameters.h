// Which fields of tasks::SearchParams each search algorithm reads, so that
// `seed run` and `seed sweep` refuse a parameter the chosen search would
// ignore. Names are task.json's ("beam_width") or the command line's
// ("beam-width"). Header-only: the checks link no search code.
#pragma once

#include <algorithm>
#include <map>
#include <string>
#include <vector>

namespace seed::search {

// By algorithm (every name of search_names(); a test holds them equal).
inline const std::map<std::string, std::vector<std::string>>& parameters_by_search() {
  static const std::map<std::string, std::vector<std::string>> parameters = {
      {"cot", {}},
      {"best-of-n", {"samples"}},
      {"weighted-best-of-n", {"samples"}},
      {"self-consistency", {"samples", "early_stop"}},
      {"bfs", {"depth", "n", "b"}},
      {"dvts", {"depth", "beams", "beam_width"}},
      {"mcts", {"depth", "n", "simulations", "parallel", "c_puct", "selection", "rollout_depth"}},
  };
  return parameters;
}

inline std::string search_parameter_field(std::string name) {
  std::replace(name.begin(), name.end(), '-', '_');
  return name;
}

// Whether some search reads `name`.
inline bool is_search_parameter(const std::string& name) {
  const std::string field = search_parameter_field(name);
  for (const auto& [algorithm, fields] : parameters_by_search()) {
    if (std::find(fields.begin(), fields.end(), field) != fields.end()) return true;
  }
  return false;
}

// Whether `algorithm` reads `name`; false for an unknown algorithm too.
inline bool search_reads(const std::string& algorithm, const std::string& name) {
  const auto it = parameters_by_search().find(algorithm);
  if (it == parameters_by_search().end()) return false;
  return std::find(it->second.begin(), it->second.end(), search_parameter_field(name)) != it->second.end();
}

}  // namespace seed::search
