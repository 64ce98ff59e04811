#include "launch/report_svg.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

namespace seed::launch {
namespace {

// Plot area inside a fixed canvas (pixels).
constexpr double kWidth = 720, kHeight = 420, kLeft = 70, kRight = 180, kTop = 40, kBottom = 60;
constexpr double kBarBottom = 150;  // room for rotated bar labels
const char* const kColors[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e",
                               "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"};
constexpr size_t kColorCount = sizeof(kColors) / sizeof(kColors[0]);

struct Scale {
  double lo, hi;  // in axis units (log10 when log)
  bool log;
  double px0, px1;
  double unit(double v) const { return log ? std::log10(v) : v; }
  double operator()(double v) const { return px0 + (unit(v) - lo) / (hi - lo) * (px1 - px0); }
};

// A tick step of 1, 2 or 5 times a power of ten, for about five ticks.
double nice_step(double range) {
  const double raw = range / 5, power = std::pow(10.0, std::floor(std::log10(raw)));
  for (const double m : {1.0, 2.0, 5.0}) {
    if (m * power >= raw) return m * power;
  }
  return 10 * power;
}

// Log axes span whole decades, linear ones whole tick steps.
Scale make_scale(double lo, double hi, bool log, double px0, double px1) {
  if (log) {
    lo = std::floor(std::log10(lo));
    hi = std::ceil(std::log10(hi));
    if (hi <= lo) hi = lo + 1;
  } else {
    if (hi <= lo) hi = lo + 1;
    const double step = nice_step(hi - lo);
    lo = std::floor(lo / step + 1e-9) * step;
    hi = std::ceil(hi / step - 1e-9) * step;
  }
  return {lo, hi, log, px0, px1};
}

std::string tick_text(double v) {
  if (v != 0 && (std::abs(v) >= 1e5 || std::abs(v) < 1e-2)) return fmt::format("{:.0e}", v);
  return fmt::format("{:g}", v);
}

// Ticks in data units: powers of ten on a log axis, five steps otherwise.
std::vector<double> ticks(const Scale& s) {
  std::vector<double> t;
  if (s.log) {
    for (double e = s.lo; e <= s.hi + 1e-9; e += 1) t.push_back(std::pow(10.0, e));
  } else {
    const double step = nice_step(s.hi - s.lo);
    for (double v = s.lo; v <= s.hi + step * 1e-6; v += step) t.push_back(std::abs(v) < step * 1e-9 ? 0.0 : v);
  }
  return t;
}

std::string open_svg(const std::string& title, double height) {
  return fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" width=\"{0}\" height=\"{1}\" "
      "viewBox=\"0 0 {0} {1}\" font-family=\"sans-serif\" font-size=\"12\">\n"
      "<text x=\"{2}\" y=\"22\" font-size=\"15\" font-weight=\"bold\">{3}</text>\n",
      kWidth, height, kLeft, xml_escape(title));
}

std::string legend_entry(size_t i, const std::string& name, const char* color, bool dashed) {
  const double y = kTop + 10 + 20 * i, x = kWidth - kRight + 15;
  return fmt::format(
      "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" stroke-width=\"2.5\"{}/>"
      "<text x=\"{}\" y=\"{}\">{}</text>\n",
      x, y, x + 22, y, color, dashed ? " stroke-dasharray=\"6 4\"" : "", x + 28, y + 4, xml_escape(name));
}

}  // namespace

std::string xml_escape(const std::string& text) {
  std::string out;
  for (const char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string line_chart_svg(const std::string& title, const ChartAxis& x_axis, const ChartAxis& y_axis,
                           const std::vector<ChartSeries>& series) {
  const auto usable = [&](double x, double y) { return (!x_axis.log || x > 0) && (!y_axis.log || y > 0); };
  double x_lo = std::numeric_limits<double>::infinity(), x_hi = -x_lo, y_lo = x_lo, y_hi = -x_lo;
  for (const ChartSeries& s : series) {
    for (size_t i = 0; i < s.x.size(); ++i) {
      if (!usable(s.x[i], s.y[i])) continue;
      x_lo = std::min(x_lo, s.x[i]);
      x_hi = std::max(x_hi, s.x[i]);
      y_lo = std::min(y_lo, s.low.empty() ? s.y[i] : s.low[i]);
      y_hi = std::max(y_hi, s.high.empty() ? s.y[i] : s.high[i]);
    }
  }
  if (!(x_lo <= x_hi)) x_lo = 1, x_hi = 10, y_lo = 0, y_hi = 1;  // nothing to draw: an empty frame
  if (!y_axis.log) y_lo = std::min(y_lo, 0.0);
  const Scale sx = make_scale(x_lo, x_hi, x_axis.log, kLeft, kWidth - kRight);
  const Scale sy = make_scale(y_lo, y_hi, y_axis.log, kHeight - kBottom, kTop);
  std::string svg = open_svg(title, kHeight);
  for (const double t : ticks(sx)) {
    svg += fmt::format(
        "<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#ddd\"/>"
        "<text x=\"{0:.1f}\" y=\"{3}\" text-anchor=\"middle\">{4}</text>\n",
        sx(t), kTop, kHeight - kBottom, kHeight - kBottom + 16, tick_text(t));
  }
  for (const double t : ticks(sy)) {
    svg += fmt::format(
        "<line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\" stroke=\"#ddd\"/>"
        "<text x=\"{3}\" y=\"{4:.1f}\" text-anchor=\"end\">{5}</text>\n",
        kLeft, sy(t), kWidth - kRight, kLeft - 6, sy(t) + 4, tick_text(t));
  }
  svg += fmt::format(
      "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#444\"/>\n"
      "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n"
      "<text transform=\"translate(18 {}) rotate(-90)\" text-anchor=\"middle\">{}</text>\n",
      kLeft, kTop, kWidth - kRight - kLeft, kHeight - kBottom - kTop, (kLeft + kWidth - kRight) / 2,
      kHeight - 18, xml_escape(x_axis.label), (kTop + kHeight - kBottom) / 2, xml_escape(y_axis.label));
  for (size_t k = 0; k < series.size(); ++k) {
    const ChartSeries& s = series[k];
    const char* color = kColors[k % kColorCount];
    std::vector<size_t> order;
    for (size_t i = 0; i < s.x.size(); ++i) {
      if (usable(s.x[i], s.y[i])) order.push_back(i);
    }
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return s.x[a] < s.x[b]; });
    if (!s.low.empty() && !order.empty()) {
      std::string band;
      for (const size_t i : order) band += fmt::format("{:.1f},{:.1f} ", sx(s.x[i]), sy(s.high[i]));
      for (auto it = order.rbegin(); it != order.rend(); ++it) {
        band += fmt::format("{:.1f},{:.1f} ", sx(s.x[*it]), sy(s.low[*it]));
      }
      svg += fmt::format("<polygon points=\"{}\" fill=\"{}\" fill-opacity=\"0.15\" stroke=\"none\"/>\n", band, color);
    }
    std::string line;
    for (const size_t i : order) line += fmt::format("{:.1f},{:.1f} ", sx(s.x[i]), sy(s.y[i]));
    svg += fmt::format("<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"{}/>\n", line, color,
                       s.dashed ? " stroke-dasharray=\"6 4\"" : "");
    for (const size_t i : order) {
      svg += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3.5\" fill=\"{}\"><title>{}: ({:g}, {:g})</title></circle>\n",
                         sx(s.x[i]), sy(s.y[i]), color, xml_escape(s.name), s.x[i], s.y[i]);
    }
    svg += legend_entry(k, s.name, color, s.dashed);
  }
  return svg + "</svg>\n";
}

std::string bar_chart_svg(const std::string& title, const std::string& y_label, const std::vector<ChartBar>& bars,
                          double reference) {
  const double height = kHeight + kBarBottom - kBottom;
  double hi = std::isnan(reference) ? 0.0 : reference;
  for (const ChartBar& b : bars) hi = std::max(hi, b.value);
  const Scale sy = make_scale(0, hi > 0 ? hi * 1.1 : 1.0, false, height - kBarBottom, kTop);
  std::string svg = open_svg(title, height);
  for (const double t : ticks(sy)) {
    svg += fmt::format(
        "<line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\" stroke=\"#ddd\"/>"
        "<text x=\"{3}\" y=\"{4:.1f}\" text-anchor=\"end\">{5}</text>\n",
        kLeft, sy(t), kWidth - kRight, kLeft - 6, sy(t) + 4, tick_text(t));
  }
  svg += fmt::format("<text transform=\"translate(18 {}) rotate(-90)\" text-anchor=\"middle\">{}</text>\n",
                     (kTop + height - kBarBottom) / 2, xml_escape(y_label));
  std::map<std::string, size_t> colors;  // group -> colour index, in order of appearance
  for (const ChartBar& b : bars) colors.emplace(b.group, colors.size());
  const double slot = (kWidth - kRight - kLeft) / std::max<size_t>(1, bars.size());
  for (size_t i = 0; i < bars.size(); ++i) {
    const ChartBar& b = bars[i];
    const double x = kLeft + slot * i + slot * 0.15, top = sy(std::max(0.0, b.value));
    svg += fmt::format(
        "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"{}\"><title>{}: {:.3g}</title></rect>\n"
        "<text transform=\"translate({:.1f} {}) rotate(-40)\" text-anchor=\"end\" font-size=\"10\">{}</text>\n",
        x, top, slot * 0.7, sy(0) - top, kColors[colors.at(b.group) % kColorCount], xml_escape(b.label), b.value,
        x + slot * 0.35, height - kBarBottom + 12, xml_escape(b.label));
  }
  if (!std::isnan(reference)) {
    svg += fmt::format("<line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\" stroke=\"#444\" stroke-dasharray=\"6 4\"/>\n",
                       kLeft, sy(reference), kWidth - kRight);
  }
  svg += fmt::format("<line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\" stroke=\"#444\"/>\n", kLeft, sy(0),
                     kWidth - kRight);
  for (const auto& [group, index] : colors) svg += legend_entry(index, group, kColors[index % kColorCount], false);
  return svg + "</svg>\n";
}

}  // namespace seed::launch
