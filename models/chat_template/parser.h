// The chat-template parser: tokens -> syntax tree, with the precedence of
// @huggingface/jinja (filters bind tighter than `is` tests, tests than
// arithmetic). Checks at parse time that every statement, filter, test,
// method and global function the template names is one the renderer
// implements, so an unsupported construct fails when the template loads.
#pragma once

#include <string>
#include <vector>

#include "models/chat_template/ast.h"
#include "models/chat_template/lexer.h"

namespace seed::models::chat {

// The top-level statements of `source`. kInvalidArgument naming the construct
// and its line:column for a syntax error or an unsupported construct.
std::vector<NodePtr> parse_template(const std::string& source);

}  // namespace seed::models::chat
