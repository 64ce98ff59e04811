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

inline void print_progress_line(size_t done, size_t total, const std::string& detail) {
  const size_t width = 30;
  const size_t filled = total ? std::min(width, width * done / total) : width;
  const std::string line = fmt::format("[{}{}] {}/{}  {}", std::string(filled, '#'), std::string(width - filled, '.'),
                                       done, total, detail);
  if (isatty(fileno(stderr))) {
    fmt::print(stderr, "\r{}{}", line, done == total ? "\n" : "");
  } else if (done == total || done % std::max<size_t>(1, total / 20) == 0) {
    fmt::print(stderr, "{}\n", line);
  }
}

}  // namespace seed::launch
