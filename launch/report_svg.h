// Charts as inline SVG text, for `seed report`'s self-contained HTML.
//
// Written here rather than taken from a JS plotting library: the report
// must open without network access, and inlining a library would ship
// hundreds of kilobytes of JavaScript in every report for four chart
// kinds; SVG text is small, renders without scripts, and is checked by
// plain string tests. Pure functions, thread-safe.
#pragma once

#include <string>
#include <vector>

namespace seed::launch {

struct ChartAxis {
  std::string label;
  bool log = false;  // log10 scale; requires positive values
};

// A line through points, optionally with a shaded band [low, high].
struct ChartSeries {
  std::string name;
  std::vector<double> x, y;
  std::vector<double> low, high;  // empty: no band; else one per point
  bool dashed = false;
};

// A line chart of `series` (each drawn in its own colour, with a legend).
// Points outside a log axis's domain (<= 0) are left out.
std::string line_chart_svg(const std::string& title, const ChartAxis& x, const ChartAxis& y,
                           const std::vector<ChartSeries>& series);

struct ChartBar {
  std::string label;  // under the bar, rotated
  double value = 0;
  std::string group;  // bars of one group share a colour and a legend entry
};

// A bar chart with a dashed reference line at `reference` (e.g. 1.0 for a
// speedup; NaN for none).
std::string bar_chart_svg(const std::string& title, const std::string& y_label, const std::vector<ChartBar>& bars,
                          double reference);

// `text` with & < > " escaped for HTML and SVG.
std::string xml_escape(const std::string& text);

}  // namespace seed::launch
