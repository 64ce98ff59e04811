#include "models/chat_template/text.h"

#include <unicode/locid.h>
#include <unicode/unistr.h>

#include <algorithm>

namespace seed::models::chat {

size_t space_length(const std::string& s, size_t i) {
  const auto at = [&](size_t k) { return k < s.size() ? static_cast<unsigned char>(s[k]) : 0; };
  const unsigned char byte = at(i);
  if (byte == ' ' || (byte >= '\t' && byte <= '\r')) return 1;
  if (byte == 0xC2 && at(i + 1) == 0xA0) return 2;                       // U+00A0
  if (byte == 0xE1 && at(i + 1) == 0x9A && at(i + 2) == 0x80) return 3;  // U+1680
  if (byte == 0xE2 && at(i + 1) == 0x80) {
    const unsigned char last = at(i + 2);
    if ((last >= 0x80 && last <= 0x8A) || last == 0xA8 || last == 0xA9 || last == 0xAF) return 3;  // U+2000..200A, 2028/9, 202F
  }
  if (byte == 0xE2 && at(i + 1) == 0x81 && at(i + 2) == 0x9F) return 3;  // U+205F
  if (byte == 0xE3 && at(i + 1) == 0x80 && at(i + 2) == 0x80) return 3;  // U+3000
  if (byte == 0xEF && at(i + 1) == 0xBB && at(i + 2) == 0xBF) return 3;  // U+FEFF
  return 0;
}

size_t char_length(const std::string& s, size_t i) {
  const auto byte = static_cast<unsigned char>(s[i]);
  const size_t length = byte < 0xC0 ? 1 : byte < 0xE0 ? 2 : byte < 0xF0 ? 3 : 4;
  return std::min(length, s.size() - i);
}

std::vector<std::string> code_points(const std::string& s) {
  std::vector<std::string> out;
  for (size_t i = 0; i < s.size();) {
    const size_t length = char_length(s, i);
    out.push_back(s.substr(i, length));
    i += length;
  }
  return out;
}

std::string trim_start(const std::string& s) {
  size_t i = 0;
  while (i < s.size() && space_length(s, i) > 0) i += space_length(s, i);
  return s.substr(i);
}

std::string trim_end(const std::string& s) {
  const std::vector<std::string> chars = code_points(s);
  size_t end = chars.size(), bytes = s.size();
  while (end > 0 && space_length(chars[end - 1], 0) == chars[end - 1].size()) bytes -= chars[--end].size();
  return s.substr(0, bytes);
}

std::string strip_chars(const std::string& s, const std::string& chars, bool start, bool end) {
  const std::vector<std::string> set = code_points(chars), text = code_points(s);
  const auto in_set = [&](const std::string& c) { return std::find(set.begin(), set.end(), c) != set.end(); };
  size_t first = 0, last = text.size();
  while (start && first < last && in_set(text[first])) ++first;
  while (end && last > first && in_set(text[last - 1])) --last;
  std::string out;
  for (size_t k = first; k < last; ++k) out += text[k];
  return out;
}

std::string to_upper(const std::string& s) {
  std::string out;
  icu::UnicodeString::fromUTF8(s).toUpper(icu::Locale::getRoot()).toUTF8String(out);
  return out;
}

std::string to_lower(const std::string& s) {
  std::string out;
  icu::UnicodeString::fromUTF8(s).toLower(icu::Locale::getRoot()).toUTF8String(out);
  return out;
}

}  // namespace seed::models::chat
