// UTF-8 string helpers for the chat-template runtime: whitespace as
// JavaScript's \s (what @huggingface/jinja trims), code points, case.
#pragma once

#include <string>
#include <vector>

namespace seed::models::chat {

// Bytes of the whitespace character at s[i] (JavaScript's \s set), 0 if none.
size_t space_length(const std::string& s, size_t i);
// Bytes of the UTF-8 character that starts at s[i] (1 for a stray byte).
size_t char_length(const std::string& s, size_t i);
std::vector<std::string> code_points(const std::string& s);

std::string trim_start(const std::string& s);
std::string trim_end(const std::string& s);
// Python's str.lstrip/rstrip(chars): drops leading/trailing characters of `chars`.
std::string strip_chars(const std::string& s, const std::string& chars, bool start, bool end);

std::string to_upper(const std::string& s);
std::string to_lower(const std::string& s);

}  // namespace seed::models::chat
