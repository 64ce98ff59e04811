// Regular expressions from task files (ECMAScript, std::regex), compiled
// with errors that name the field.
//
// libstdc++'s regex compiler reads the number of a back-reference ("\12")
// or of a repeat ("{2,5}") without checking for overflow: a number of 19
// digits is undefined behaviour in the library itself. Such numbers (more
// than 9 digits, far past any real group count or repeat) are refused
// before it sees them.
#pragma once

#include <regex>
#include <string>

namespace seed::tasks {

// Throws seed::Error kInvalidArgument naming `where` when the pattern is
// invalid.
std::regex compile_task_regex(const std::string& pattern, const std::string& where,
                              std::regex::flag_type flags = std::regex::ECMAScript);

}  // namespace seed::tasks
