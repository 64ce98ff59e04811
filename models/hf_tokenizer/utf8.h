// UTF-8 helpers shared by the tokenizer.json components.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace seed::models::hf {

// Byte length of the UTF-8 character starting with `lead` (1 for a stray
// continuation or invalid lead byte, so that scanning always advances).
inline size_t utf8_char_length(unsigned char lead) {
  if (lead < 0xC0) return 1;
  if (lead < 0xE0) return 2;
  if (lead < 0xF0) return 3;
  return lead < 0xF8 ? 4 : 1;
}

// Appends code point `cp` to `out` as UTF-8.
void append_utf8(char32_t cp, std::string* out);

// `bytes` with each ill-formed sequence replaced by U+FFFD, one per maximal
// subpart (what Rust's String::from_utf8_lossy and the WHATWG decoder do).
std::string utf8_lossy(std::string_view bytes);

// True if `bytes` is well-formed UTF-8.
bool utf8_valid(std::string_view bytes);

// Whether `cp` has the Unicode White_Space property (Rust's char::is_whitespace).
bool is_unicode_whitespace(char32_t cp);

// Decodes the character at `text[*pos]` and advances *pos past it. Requires
// well-formed UTF-8 (the tokenizer checks input once at the top).
char32_t next_code_point(std::string_view text, size_t* pos);

// `text` without leading / trailing White_Space characters.
std::string_view trim_left_whitespace(std::string_view text);
std::string_view trim_right_whitespace(std::string_view text);

}  // namespace seed::models::hf
