// Counts in messages and logs: "1 problem", "4 problems".
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <string>

namespace seed::launch {

// `count` then `noun`, which takes an "s" unless the count is 1.
inline std::string counted(int64_t count, const std::string& noun) {
  return fmt::format("{} {}{}", count, noun, count == 1 ? "" : "s");
}

}  // namespace seed::launch
