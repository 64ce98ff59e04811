#include "launch/report_html.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <set>
#include <sstream>

#include "launch/report_svg.h"

namespace seed::launch {
namespace {

using nlohmann::json;

std::string param_text(const json& row, const char* key) {
  const json& p = row["params"];
  if (!p.contains(key)) return "";
  return p[key].is_string() ? p[key].get<std::string>() : p[key].dump();
}

double number(const json& row, const char* key) {
  const json& v = row.value(key, json());
  return v.is_number() ? v.get<double>() : std::numeric_limits<double>::quiet_NaN();
}

// The engine and its drafting settings, the colour group of a bar.
std::string engine_group(const json& row) {
  std::string group = param_text(row, "engine");
  for (const char* key : {"drafter", "draft-length", "k-config"}) {
    const std::string v = param_text(row, key);
    if (!v.empty()) group += fmt::format(" {} {}", key, v);
  }
  return group;
}

// The accuracy/tokens chart draws one engine's rows, the engine with the
// most points other than the baseline's: the baseline points repeat some
// searches (greedy answers do not depend on the engine).
std::vector<const json*> scaling_rows(const std::vector<json>& rows) {
  std::set<std::string> baselines;
  for (const json& r : rows) {
    if (r.value("baseline", json()).is_string()) baselines.insert(r["baseline"].get<std::string>());
  }
  std::map<std::string, size_t> per_engine;
  for (const json& r : rows) {
    if (!baselines.count(r["slug"].get<std::string>())) ++per_engine[param_text(r, "engine")];
  }
  if (per_engine.empty()) {  // every point is some point's baseline
    for (const json& r : rows) ++per_engine[param_text(r, "engine")];
  }
  std::string engine;
  size_t most = 0;
  for (const auto& [e, count] : per_engine) {
    if (count > most) engine = e, most = count;
  }
  std::vector<const json*> out;
  for (const json& r : rows) {
    if (param_text(r, "engine") == engine) out.push_back(&r);
  }
  return out;
}

std::string scaling_chart(const std::vector<json>& rows) {
  const std::vector<const json*> chosen = scaling_rows(rows);
  std::map<std::string, ChartSeries> by_search;
  std::vector<std::string> order;
  std::vector<double> tokens, accuracy;
  for (const json* r : chosen) {
    const std::string search = param_text(*r, "search");
    if (!by_search.count(search)) order.push_back(search);
    ChartSeries& s = by_search[search];
    s.name = search.empty() ? "run" : search;
    s.x.push_back(number(*r, "tokens_per_problem"));
    s.y.push_back(number(*r, "accuracy"));
    s.low.push_back(number(*r, "accuracy_low"));
    s.high.push_back(number(*r, "accuracy_high"));
    tokens.push_back(s.x.back());
    accuracy.push_back(s.y.back());
  }
  std::vector<ChartSeries> series;
  for (const std::string& s : order) series.push_back(by_search[s]);
  ChartSeries frontier{"best frontier", {}, {}, {}, {}, true};
  for (const size_t i : best_frontier(tokens, accuracy)) {
    frontier.x.push_back(tokens[i]);
    frontier.y.push_back(accuracy[i]);
  }
  series.push_back(frontier);
  const std::string engine = chosen.empty() ? "" : param_text(*chosen.front(), "engine");
  return line_chart_svg("Accuracy against tokens per problem (engine " + engine + ", 95% Wilson bands)",
                        {"tokens per problem (log scale)", true}, {"accuracy", false}, series);
}

// Bar labels: each row's slug less the key=value parts every labelled row
// shares (e.g. "engine=seed"), so that long slugs fit under their bars.
std::vector<std::string> short_labels(const std::vector<const json*>& rows) {
  std::vector<std::vector<std::string>> parts;
  for (const json* r : rows) {
    std::vector<std::string> p;
    std::stringstream slug(r->at("slug").get<std::string>());
    for (std::string part; std::getline(slug, part, '_');) p.push_back(part);
    parts.push_back(p);
  }
  std::vector<std::string> labels;
  for (const std::vector<std::string>& p : parts) {
    std::string label;
    for (const std::string& part : p) {
      const bool shared = parts.size() > 1 && std::all_of(parts.begin(), parts.end(), [&](const auto& other) {
        return std::find(other.begin(), other.end(), part) != other.end();
      });
      if (!shared) label += (label.empty() ? "" : " ") + part;
    }
    labels.push_back(label.empty() ? rows[labels.size()]->at("slug").get<std::string>() : label);
  }
  return labels;
}

std::string speedup_chart(const std::vector<json>& rows) {
  std::vector<const json*> chosen;
  for (const json& r : rows) {
    if (r.value("speedup", json()).is_number()) chosen.push_back(&r);
  }
  const std::vector<std::string> labels = short_labels(chosen);
  std::vector<ChartBar> bars;
  for (size_t i = 0; i < chosen.size(); ++i) {
    bars.push_back({labels[i], number(*chosen[i], "speedup"), engine_group(*chosen[i])});
  }
  if (bars.empty()) return "<p>No point has a baseline engine point to compare with.</p>\n";
  return bar_chart_svg("Speedup over the baseline engine at the same point (tokens/s)", "speedup (x)", bars, 1.0);
}

// Alpha and tau of the rows that drafted, one chart each (their scales differ).
std::string acceptance_charts(const std::vector<json>& rows) {
  std::vector<const json*> chosen;
  for (const json& r : rows) {
    if (number(r, "alpha") > 0) chosen.push_back(&r);
  }
  const std::vector<std::string> labels = short_labels(chosen);
  std::vector<ChartBar> alpha, tau;
  for (size_t i = 0; i < chosen.size(); ++i) {
    alpha.push_back({labels[i], number(*chosen[i], "alpha"), engine_group(*chosen[i])});
    tau.push_back({labels[i], number(*chosen[i], "tau"), engine_group(*chosen[i])});
  }
  if (alpha.empty()) return "<p>No point drafted tokens.</p>\n";
  return bar_chart_svg("Acceptance rate alpha (accepted over tested draft tokens)", "alpha", alpha, std::nan("")) +
         bar_chart_svg("Tokens per target forward tau", "tau", tau, 1.0);
}

std::string cell(const json& v) {
  if (v.is_null()) return "";
  if (v.is_number_float()) return fmt::format("{:.3g}", v.get<double>());
  return xml_escape(v.is_string() ? v.get<std::string>() : v.dump());
}

std::string table(const std::vector<json>& rows) {
  const char* figures[] = {"problems", "accuracy", "accuracy_low", "accuracy_high", "tokens_per_problem",
                           "target_forwards", "wall_s", "tokens_per_s", "alpha", "tau", "speedup"};
  std::string html = "<table>\n<tr><th>point</th>";
  for (const char* f : figures) html += fmt::format("<th>{}</th>", f);
  html += "</tr>\n";
  for (const json& r : rows) {
    html += "<tr><td>" + cell(r["slug"]) + "</td>";
    for (const char* f : figures) html += "<td>" + cell(r.value(f, json())) + "</td>";
    html += "</tr>\n";
  }
  return html + "</table>\n";
}

}  // namespace

std::vector<size_t> best_frontier(const std::vector<double>& tokens, const std::vector<double>& accuracy) {
  std::vector<size_t> order(tokens.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return tokens[a] != tokens[b] ? tokens[a] < tokens[b] : accuracy[a] > accuracy[b];
  });
  std::vector<size_t> frontier;
  double best = -std::numeric_limits<double>::infinity();
  for (const size_t i : order) {
    if (accuracy[i] > best) {
      frontier.push_back(i);
      best = accuracy[i];
    }
  }
  return frontier;
}

std::string sweep_report_html(const std::string& title, const std::vector<json>& rows) {
  std::string html = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>seed sweep: {0}</title>\n"
      "<style>body{{font-family:sans-serif;margin:24px;color:#222}} .charts{{display:flex;flex-wrap:wrap;gap:16px}} "
      "table{{border-collapse:collapse;font-size:12px}} td,th{{border:1px solid #ccc;padding:3px 6px;"
      "text-align:right}} td:first-child{{text-align:left}}</style>\n</head>\n<body>\n"
      "<h1>seed sweep: {0}</h1>\n<p>{1} points. Accuracy intervals are 95% Wilson score intervals; speedup is the "
      "point's tokens/s over the baseline engine's at the same point, on the same problems.</p>\n",
      xml_escape(title), rows.size());
  html += "<div class=\"charts\">\n" + scaling_chart(rows) + speedup_chart(rows) + acceptance_charts(rows) + "</div>\n";
  html += "<h2>Table</h2>\n" + table(rows);
  return html + "</body>\n</html>\n";
}

}  // namespace seed::launch
