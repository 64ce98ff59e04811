// The chat-template lexer: Jinja source -> tokens, each with its line:column.
//
// Follows @huggingface/jinja (what transformers.js renders chat templates
// with), itself modelled on Python Jinja as transformers configures it:
// trim_blocks and lstrip_blocks on, one trailing newline dropped, `{%-` /
// `-%}` (and `{{-`, `-}}`, `{#-`, `-#}`) strip the whitespace beside them.
#pragma once

#include <string>
#include <vector>

namespace seed::models::chat {

enum class TokenKind {
  kText,               // template text outside {{ }} / {% %}
  kNumber,             // 12, 1.5, -3 (a sign directly before a literal)
  kString,             // 'a' or "a", escapes resolved
  kIdentifier,         // names and keywords (for, in, not, ...)
  kOpenStatement,      // {%
  kCloseStatement,     // %}
  kOpenExpression,     // {{
  kCloseExpression,    // }}
  kOperator,           // + - ~ * / // % ** == != < > <= >= = ( ) [ ] { } , . : |
  kUnary,              // + or - in prefix position without a number after it
  kComment,            // {# ... #}
};

struct Token {
  TokenKind kind;
  std::string text;
  int line = 1, column = 1;  // where it starts in the template source (1-based)
};

// "line L:C" for messages.
std::string position_name(int line, int column);

// Tokenizes `source`. kInvalidArgument naming the position for an unknown
// character, an unterminated string or comment, or a bad escape.
std::vector<Token> tokenize_template(const std::string& source);

}  // namespace seed::models::chat
