// One progress line on stderr for a long command (`seed run`, `seed eval`):
// "[#####.....] done/total  detail", redrawn in place on a terminal, and
// every 5% (and at the end) when stderr is a log file.
#pragma once

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <string>

namespace seed::launch {

// "ETA 3m07s" (or "ETA 1h02m") for `seconds` of work left; "ETA ?" when
// there is nothing yet to estimate it from (seconds < 0).
inline std::string eta_text(double seconds) {
  if (seconds < 0) return "ETA ?";
  const int s = static_cast<int>(seconds);
  return s >= 3600 ? fmt::format("ETA {}h{:02}m", s / 3600, s / 60 % 60) : fmt::format("ETA {}m{:02}s", s / 60, s % 60);
}

// `terminal_only`: a redraw between finishes (a problem started), which a
// log file does not get a line for.
inline void print_progress_line(size_t done, size_t total, const std::string& detail, bool terminal_only = false) {
  const size_t width = 30;
  const size_t filled = total ? std::min(width, width * done / total) : width;
  const std::string line = fmt::format("[{}{}] {}/{}  {}", std::string(filled, '#'), std::string(width - filled, '.'),
                                       done, total, detail);
  if (isatty(fileno(stderr))) {
    fmt::print(stderr, "\r{}\x1b[K{}", line, done == total ? "\n" : "");  // ESC [K clears what a longer line left
  } else if (!terminal_only && (done == total || done % std::max<size_t>(1, total / 20) == 0)) {
    fmt::print(stderr, "{}\n", line);
  }
}

}  // namespace seed::launch
