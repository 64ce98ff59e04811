// `seed report`'s page: one self-contained HTML file (inline CSS and SVG,
// no scripts, nothing fetched) drawn from a sweep's table rows
// (launch/sweep_table.h):
//   - accuracy against tokens per problem (log scale), one line per search
//     with its 95% Wilson band, and the best frontier over every point;
//   - the speedup over the baseline engine per engine and drafter at each
//     point that has one;
//   - acceptance alpha and tau of the speculative points;
//   - the table.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace seed::launch {

// The frontier of (tokens, accuracy) points: those that no cheaper point
// matches or beats in accuracy, ordered by tokens. Returns their indices.
std::vector<size_t> best_frontier(const std::vector<double>& tokens, const std::vector<double>& accuracy);

// The whole page. `title` heads it (the sweep folder's name).
std::string sweep_report_html(const std::string& title, const std::vector<nlohmann::json>& rows);

}  // namespace seed::launch
