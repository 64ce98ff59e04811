// The chat template's expression grammar, loosest first: `x if c else y`,
// or, and, not, comparisons and `in`, + - ~, * / // %, **, `is` tests,
// | filters, signs, then members, subscripts, slices, calls and literals.
// It also holds what the statement parser (parser.cpp) builds on: the token
// cursor, node construction, the nesting bound and the errors.
//
// One instance parses one template's tokens, which it owns; not thread-safe.
#pragma once

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "models/base/error.h"
#include "models/chat_template/ast.h"
#include "models/chat_template/lexer.h"

namespace seed::models::chat {

class ExpressionParser {
 protected:
  explicit ExpressionParser(std::vector<Token> tokens) : tokens_(std::move(tokens)) {}

  struct Site {
    std::string name;
    int line, column;
  };

  // Blocks, elifs and expressions nest by recursion here and in the
  // renderer: a template nested deeper than kMaxNesting is refused, where it
  // would otherwise overflow the stack.
  class Nested {
   public:
    Nested(ExpressionParser& parser, const Token& at) : parser_(parser) {
      if (++parser_.depth_ > kMaxNesting) {
        --parser_.depth_;
        fail(at, "nested more than " + std::to_string(kMaxNesting) + " levels deep");
      }
    }
    ~Nested() { --parser_.depth_; }
    Nested(const Nested&) = delete;
    Nested& operator=(const Nested&) = delete;

   private:
    ExpressionParser& parser_;
  };

  // Expressions, loosest first; these are the entry points statements use.

  NodePtr parse_sequence(bool primary);
  NodePtr parse_expression();
  NodePtr parse_filter_call(NodePtr operand);
  NodePtr parse_call(NodePtr callee);
  std::vector<NodePtr> parse_arguments(bool parameters);
  NodePtr parse_primary();

  // Token helpers

  const Token& peek() const {
    if (at_ >= tokens_.size()) fail_at(tokens_.back().line, tokens_.back().column, "unexpected end of template");
    return tokens_[at_];
  }
  TokenKind peek_kind() const { return at_ < tokens_.size() ? tokens_[at_].kind : TokenKind::kText; }
  const Token& next() {
    const Token& token = peek();
    ++at_;
    return token;
  }
  bool is_operator(const char* text) const {
    return at_ < tokens_.size() && tokens_[at_].kind == TokenKind::kOperator && tokens_[at_].text == text;
  }
  bool is_identifier(const std::string& text) const {
    return at_ < tokens_.size() && tokens_[at_].kind == TokenKind::kIdentifier && tokens_[at_].text == text;
  }
  bool at_statement(const std::set<std::string>& names) const {
    return at_ + 1 < tokens_.size() && tokens_[at_].kind == TokenKind::kOpenStatement &&
           tokens_[at_ + 1].kind == TokenKind::kIdentifier && names.count(tokens_[at_ + 1].text) > 0;
  }
  void expect(TokenKind kind, const char* text) {
    if (at_ >= tokens_.size()) fail_at(tokens_.back().line, tokens_.back().column, std::string("missing '") + text + "'");
    if (tokens_[at_].kind != kind) fail(tokens_[at_], std::string("expected '") + text + "', got '" + tokens_[at_].text + "'");
    ++at_;
  }
  void expect_operator(const char* text) {
    if (!is_operator(text)) {
      if (at_ >= tokens_.size()) fail_at(tokens_.back().line, tokens_.back().column, std::string("missing '") + text + "'");
      fail(tokens_[at_], std::string("expected '") + text + "', got '" + tokens_[at_].text + "'");
    }
    ++at_;
  }

  static NodePtr make_at(NodeKind kind, int line, int column) {
    NodePtr node = std::make_unique<Node>();
    node->kind = kind;
    node->line = line;
    node->column = column;
    return node;
  }
  static NodePtr make(NodeKind kind, const Token& token) { return make_at(kind, token.line, token.column); }

  [[noreturn]] static void fail_at(int line, int column, const std::string& message) {
    SEED_FAIL(kInvalidArgument) << "chat template " << position_name(line, column) << ": " << message;
  }
  [[noreturn]] static void fail(const Token& token, const std::string& message) {
    fail_at(token.line, token.column, message);
  }
  [[noreturn]] static void fail_node(const Node& node, const std::string& message) {
    fail_at(node.line, node.column, message);
  }

  std::vector<Token> tokens_;
  size_t at_ = 0;
  int depth_ = 0;
  std::vector<Site> calls_;  // calls of a name, checked once every macro is known

 private:
  NodePtr parse_or();
  NodePtr parse_and();
  NodePtr parse_not();
  NodePtr parse_comparison();
  NodePtr parse_additive();
  NodePtr parse_multiplicative();
  NodePtr parse_power();
  NodePtr parse_test();
  NodePtr parse_filter();
  NodePtr parse_sign();
  NodePtr parse_member(NodePtr object);
  NodePtr binary(const Token& op, NodePtr left, NodePtr right);
  static Value number_literal(const Token& token);
};

}  // namespace seed::models::chat
