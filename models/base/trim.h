// trim: text without the whitespace at either end, the one definition the
// task checkers, data readers and step verifiers share.
#pragma once

#include <cctype>
#include <string_view>

namespace seed {

// `text` without leading and trailing whitespace (std::isspace); a view
// into `text`, so it lives as long as `text` does.
inline std::string_view trim(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
  return text;
}

}  // namespace seed
