#include "tasks/task_regex.h"

#include <cctype>

#include "models/base/error.h"

namespace seed::tasks {
namespace {

constexpr size_t kMaxRegexDigits = 9;

bool is_digit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

// The length of the run of digits at `at`.
size_t digits_at(const std::string& pattern, size_t at) {
  size_t end = at;
  while (end < pattern.size() && is_digit(pattern[end])) ++end;
  return end - at;
}

// The first number the regex compiler would read whole that has too many
// digits (a back-reference, or a bound of a repeat), or npos.
size_t overlong_number(const std::string& pattern) {
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '\\') {
      if (digits_at(pattern, i + 1) > kMaxRegexDigits) return i;
      ++i;  // the escaped character
    } else if (pattern[i] == '{') {
      size_t at = i + 1;
      const size_t low = digits_at(pattern, at);
      at += low;
      const size_t high = at < pattern.size() && pattern[at] == ',' ? digits_at(pattern, at + 1) : 0;
      if (low > kMaxRegexDigits || high > kMaxRegexDigits) return i;
    }
  }
  return std::string::npos;
}

}  // namespace

std::regex compile_task_regex(const std::string& pattern, const std::string& where, std::regex::flag_type flags) {
  const size_t at = overlong_number(pattern);
  SEED_CHECK(at == std::string::npos, kInvalidArgument)
      << where << ": invalid regex '" << pattern << "': a back-reference or repeat count at offset " << at
      << " has more than " << kMaxRegexDigits << " digits";
  try {
    return std::regex(pattern, flags);
  } catch (const std::regex_error& e) {
    SEED_FAIL(kInvalidArgument) << where << ": invalid regex '" << pattern << "': " << e.what();
  }
}

}  // namespace seed::tasks
