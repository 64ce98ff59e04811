// The chat-template renderer: walks the syntax tree over Values and writes
// the text. Scoping follows Jinja: a for loop's body has its own scope (a
// `set` inside it does not leak out; namespaces carry state across), `if`
// does not.
#pragma once

#include <string>
#include <vector>

#include "models/chat_template/ast.h"
#include "models/chat_template/value.h"

namespace seed::models::chat {

// Renders `program` with `variables` (messages, add_generation_prompt, the
// special tokens, ...) on top of the globals. kInvalidArgument naming the
// line:column for a runtime error; raise_exception('msg') gives one whose
// message contains msg.
std::string render_program(const std::vector<NodePtr>& program, const Members& variables);

}  // namespace seed::models::chat
