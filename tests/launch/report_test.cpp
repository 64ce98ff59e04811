// The report's charts are SVG drawn from the table's numbers: points land
// where the axes put them, and the page holds every chart and row.
#include "launch/report_html.h"
#include "launch/report_svg.h"

#include <gtest/gtest.h>

#include <cmath>
#include <regex>

namespace seed::launch {
namespace {

using nlohmann::json;

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(ReportSvgTest, ALogAxisSpacesDecadesEvenly) {
  ChartSeries s{"bfs", {10, 100, 1000}, {0.1, 0.2, 0.3}, {}, {}, false};
  const std::string svg = line_chart_svg("t", {"tokens", true}, {"accuracy", false}, {s});
  std::smatch m;
  std::vector<double> xs;
  const std::regex circle("<circle cx=\"([0-9.]+)\"");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), circle); it != std::sregex_iterator(); ++it) {
    xs.push_back(std::stod((*it)[1]));
  }
  ASSERT_EQ(xs.size(), 3u);
  EXPECT_NEAR(xs[1] - xs[0], xs[2] - xs[1], 0.2);
  EXPECT_EQ(count(svg, "<polygon"), 0u);  // no band asked for
}

TEST(ReportSvgTest, BandsLegendsAndEscapedText) {
  ChartSeries s{"a<b", {1, 2}, {0.5, 0.6}, {0.4, 0.5}, {0.6, 0.7}, false};
  const std::string svg = line_chart_svg("x & y", {"x", false}, {"y", false}, {s});
  EXPECT_EQ(count(svg, "<polygon"), 1u);
  EXPECT_NE(svg.find("a&lt;b"), std::string::npos);
  EXPECT_NE(svg.find("x &amp; y"), std::string::npos);
  EXPECT_EQ(svg.find("a<b"), std::string::npos);
}

TEST(ReportSvgTest, BarsShareAColourPerGroup) {
  const std::string svg = bar_chart_svg("speedup", "x", {{"p1", 2.0, "seed"}, {"p2", 1.5, "seed"}, {"p3", 1.2, "sd"}}, 1.0);
  EXPECT_EQ(count(svg, "<rect x="), 3u);
  EXPECT_EQ(count(svg, "fill=\"#1f77b4\"><title>"), 2u);
  EXPECT_EQ(count(svg, "stroke-dasharray"), 1u);  // the reference line
}

TEST(ReportHtmlTest, TheFrontierKeepsPointsNoCheaperPointBeats) {
  EXPECT_EQ(best_frontier({100, 50, 400, 200, 300}, {0.2, 0.1, 0.5, 0.2, 0.4}),
            (std::vector<size_t>{1, 0, 4, 2}));
  EXPECT_TRUE(best_frontier({}, {}).empty());
}

json row(const std::string& slug, const std::string& search, const std::string& engine, double tokens, double acc,
         json speedup, double alpha) {
  return {{"slug", slug}, {"params", {{"search", search}, {"engine", engine}}}, {"problems", 10}, {"accuracy", acc},
          {"accuracy_low", acc / 2}, {"accuracy_high", std::min(1.0, acc * 1.5)}, {"tokens_per_problem", tokens},
          {"target_forwards", 10}, {"wall_s", 1.0}, {"tokens_per_s", 100.0}, {"alpha", alpha}, {"tau", 1 + alpha},
          {"speedup", speedup}, {"baseline", speedup.is_null() ? json() : json("x")}};
}

TEST(ReportHtmlTest, ThePageHoldsEveryChartAndRowAndNoScript) {
  const std::vector<json> rows = {row("cot-ar", "cot", "ar", 50, 0.1, nullptr, 0),
                                  row("cot-seed", "cot", "seed", 50, 0.1, 1.8, 0.6),
                                  row("bfs-seed", "bfs", "seed", 900, 0.3, nullptr, 0.7),
                                  row("bfs4-seed", "bfs", "seed", 2000, 0.4, nullptr, 0.7)};
  const std::string html = sweep_report_html("demo", rows);
  EXPECT_EQ(count(html, "<svg"), 4u);  // scaling, speedup, alpha, tau
  EXPECT_EQ(count(html, "<tr>"), 1u + rows.size());
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("http://") , html.find("http://www.w3.org/2000/svg"));  // only the SVG namespace
  EXPECT_NE(html.find("best frontier"), std::string::npos);
}

}  // namespace
}  // namespace seed::launch
