// Checks on a numeric flag's value, as CLI11 validators whose messages say
// what was expected ("--limit: -1 is negative; expected 0 or more"); CLI11
// puts the flag's name in front. Their descriptions, NONNEGATIVE and
// POSITIVE, are what --help shows after the type.
#pragma once

#include <CLI/CLI.hpp>

#include <charconv>
#include <optional>
#include <string>
#include <system_error>

namespace seed::launch {

// `text` as a whole integer; nullopt for anything else ("abc", "1.5", "").
inline std::optional<long long> whole_integer(const std::string& text) {
  long long value = 0;
  const char* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, value);
  if (error != std::errc() || stop != end) return std::nullopt;
  return value;
}

// An integer >= 0.
inline CLI::Validator non_negative_integer() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        const std::optional<long long> value = whole_integer(text);
        if (!value) return "expected an integer 0 or more, got " + text;
        return *value < 0 ? text + " is negative; expected 0 or more" : "";
      },
      "NONNEGATIVE");
}

// An integer >= 1.
inline CLI::Validator positive_integer() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        const std::optional<long long> value = whole_integer(text);
        return value && *value >= 1 ? "" : "expected a positive integer, got " + text;
      },
      "POSITIVE");
}

}  // namespace seed::launch
