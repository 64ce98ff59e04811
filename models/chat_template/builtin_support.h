// What the builtins share (builtins.cpp, filters.cpp, methods.cpp): argument
// lookup, their errors, ordering, and a few string operations.
#pragma once

#include <cstdint>
#include <string>

#include "models/chat_template/value.h"

namespace seed::models::chat {

// kInvalidArgument with `message` (the renderer adds the position).
[[noreturn]] void builtin_error(const std::string& message);
// Positional argument `index`, else keyword `keyword`, else `fallback`. A
// copy: callers pass temporaries as the fallback, which a returned reference
// would outlive.
Value argument(const CallArgs& args, size_t index, const char* keyword, const Value& fallback);
std::string string_argument(const CallArgs& args, size_t index, const char* keyword, const std::string& what);

// An integer result as a Value; kInvalidArgument if it is past int64 (Python's
// integers have no bound, seed's are 64-bit) or not a number.
Value integer_result(__int128 value);
Value integer_result(double value);

// Python's str.replace: at most `count` replacements (-1: all).
std::string replace_all(const std::string& text, const std::string& from, const std::string& to, int64_t count);
std::string title_case(const std::string& text);
std::string capitalize(const std::string& text);
// A dict's [key, value] pairs in order.
Value items_of(const Value& object);
// Ordering for sort/dictsort and comparison tests: numbers with numbers,
// strings with strings; kInvalidArgument for others.
int compare(const Value& a, const Value& b, bool case_sensitive);

}  // namespace seed::models::chat
