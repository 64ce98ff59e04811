// What a chat template may call: filters (x | trim; filters.cpp), tests
// (x is defined), methods (s.strip(), d.items(); methods.cpp) and global
// functions (raise_exception, namespace, range, strftime_now). The parser checks names against these
// lists at load; the renderer applies them. Semantics follow @huggingface/jinja
// except where it departs from Python Jinja in a way real templates notice:
// strip/lstrip/rstrip honour their `chars` argument (Qwen3's .lstrip('\n')).
#pragma once

#include <string>

#include "models/chat_template/value.h"

namespace seed::models::chat {

bool is_known_filter(const std::string& name);
bool is_known_test(const std::string& name);
// Tests that compare with an argument (x is equalto 3, x is divisibleby(2)).
bool test_takes_argument(const std::string& name);
bool is_known_method(const std::string& name);
bool is_global_function(const std::string& name);

// Each throws kInvalidArgument saying what went wrong (a filter applied to a
// value it does not take, a bad argument); the renderer adds the position.
Value apply_filter(const std::string& name, const Value& operand, const CallArgs& args);
bool apply_test(const std::string& name, const Value& operand, const std::vector<Value>& args = {});
// `object.name`: a method bound to `object` or a property such as a string's
// length; undefined when `object` has no such builtin.
Value builtin_member(const Value& object, const std::string& name);
// The global functions, for a fresh render.
Members global_functions();

}  // namespace seed::models::chat
