#include "models/chat_template/parser.h"

#include <set>

#include "models/chat_template/builtins.h"
#include "models/chat_template/expression_parser.h"

namespace seed::models::chat {
namespace {

class Parser : public ExpressionParser {
 public:
  explicit Parser(std::vector<Token> tokens) : ExpressionParser(std::move(tokens)) {}

  std::vector<NodePtr> run() {
    std::vector<NodePtr> program;
    while (at_ < tokens_.size()) program.push_back(parse_any());
    for (const Site& call : calls_) {
      if (!is_global_function(call.name) && macros_.count(call.name) == 0 && call.name != "caller") {
        fail_at(call.line, call.column, "unsupported function '" + call.name + "'");
      }
    }
    return program;
  }

 private:
  // Statements

  NodePtr parse_any() {
    const Token& token = peek();
    const Nested nested(*this, token);
    switch (token.kind) {
      case TokenKind::kText: {
        NodePtr text = make(NodeKind::kText, next());
        text->name = token.text;
        return text;
      }
      case TokenKind::kComment: return make(NodeKind::kComment, next());
      case TokenKind::kOpenExpression: {
        NodePtr output = make(NodeKind::kOutput, next());
        output->children.push_back(parse_expression());
        expect(TokenKind::kCloseExpression, "}}");
        return output;
      }
      case TokenKind::kOpenStatement: return parse_statement();
      default: fail(token, "unexpected '" + token.text + "' outside {{ }} or {% %}");
    }
  }

  NodePtr parse_statement() {
    next();  // {%
    const Token& keyword = peek();
    if (keyword.kind != TokenKind::kIdentifier) fail(keyword, "expected a statement name after {%");
    next();
    const std::string& name = keyword.text;
    if (name == "set") return parse_set(keyword);
    if (name == "if") {
      NodePtr node = parse_if(keyword);
      close_block("endif");
      return node;
    }
    if (name == "for") return parse_for(keyword);
    if (name == "macro") return parse_macro(keyword);
    if (name == "call") return parse_call_block(keyword);
    if (name == "filter") return parse_filter_block(keyword);
    if (name == "break" || name == "continue") {
      expect(TokenKind::kCloseStatement, "%}");
      return make(name == "break" ? NodeKind::kBreak : NodeKind::kContinue, keyword);
    }
    fail(keyword, "unsupported statement '" + name + "'");
  }

  NodePtr parse_set(const Token& keyword) {
    NodePtr node = make(NodeKind::kSet, keyword);
    node->children.push_back(parse_sequence(/*primary=*/false));
    check_target(*node->children[0], /*allow_member=*/true);
    if (is_operator("=")) {
      next();
      node->children.push_back(parse_sequence(false));
      expect(TokenKind::kCloseStatement, "%}");
    } else {
      expect(TokenKind::kCloseStatement, "%}");
      node->body = parse_until({"endset"});
      close_block("endset");
    }
    return node;
  }

  NodePtr parse_if(const Token& keyword) {
    const Nested nested(*this, keyword);
    NodePtr node = make(NodeKind::kIf, keyword);
    node->children.push_back(parse_expression());
    expect(TokenKind::kCloseStatement, "%}");
    node->body = parse_until({"elif", "else", "endif"});
    if (at_statement({"elif"})) {
      next();
      const Token& elif = next();
      node->else_body.push_back(parse_if(elif));
    } else if (at_statement({"else"})) {
      next();
      next();
      expect(TokenKind::kCloseStatement, "%}");
      node->else_body = parse_until({"endif"});
    }
    return node;
  }

  NodePtr parse_for(const Token& keyword) {
    NodePtr node = make(NodeKind::kFor, keyword);
    node->children.push_back(parse_sequence(/*primary=*/true));
    check_target(*node->children[0], /*allow_member=*/false);
    if (!is_identifier("in")) fail(peek(), "expected 'in' after the loop variable");
    next();
    node->children.push_back(parse_expression());
    expect(TokenKind::kCloseStatement, "%}");
    node->body = parse_until({"endfor", "else"});
    if (at_statement({"else"})) {
      next();
      next();
      expect(TokenKind::kCloseStatement, "%}");
      node->else_body = parse_until({"endfor"});
    }
    close_block("endfor");
    return node;
  }

  NodePtr parse_macro(const Token& keyword) {
    NodePtr node = make(NodeKind::kMacro, keyword);
    const Token& name = next();
    if (name.kind != TokenKind::kIdentifier) fail(name, "expected the macro's name");
    node->name = name.text;
    macros_.insert(name.text);
    node->children = parse_arguments(/*parameters=*/true);
    expect(TokenKind::kCloseStatement, "%}");
    node->body = parse_until({"endmacro"});
    close_block("endmacro");
    return node;
  }

  NodePtr parse_call_block(const Token& keyword) {
    NodePtr node = make(NodeKind::kCallBlock, keyword);
    if (is_operator("(")) fail(peek(), "unsupported call block with caller arguments");
    const Token& callee = next();
    if (callee.kind != TokenKind::kIdentifier) fail(callee, "expected a macro name after 'call'");
    NodePtr name = make(NodeKind::kName, callee);
    name->name = callee.text;
    node->children.push_back(parse_call(std::move(name)));
    expect(TokenKind::kCloseStatement, "%}");
    node->body = parse_until({"endcall"});
    close_block("endcall");
    return node;
  }

  NodePtr parse_filter_block(const Token& keyword) {
    NodePtr node = make(NodeKind::kFilterBlock, keyword);
    node->children.push_back(parse_filter_call(nullptr));
    expect(TokenKind::kCloseStatement, "%}");
    node->body = parse_until({"endfilter"});
    close_block("endfilter");
    return node;
  }

  std::vector<NodePtr> parse_until(const std::set<std::string>& ends) {
    std::vector<NodePtr> body;
    while (!at_statement(ends)) {
      if (at_ >= tokens_.size()) {
        fail_at(tokens_.back().line, tokens_.back().column, "missing {% " + *ends.rbegin() + " %}");
      }
      body.push_back(parse_any());
    }
    return body;
  }

  void close_block(const std::string& end) {
    expect(TokenKind::kOpenStatement, "{%");
    if (!is_identifier(end)) fail(peek(), "expected '" + end + "'");
    next();
    expect(TokenKind::kCloseStatement, "%}");
  }

  void check_target(const Node& target, bool allow_member) {
    if (target.kind == NodeKind::kName) return;
    if (target.kind == NodeKind::kTuple) {
      for (const NodePtr& item : target.children) {
        if (item->kind != NodeKind::kName) fail_node(*item, "a tuple target may only hold names");
      }
      return;
    }
    if (allow_member && target.kind == NodeKind::kMember && !target.flag) return;
    fail_node(target, "cannot assign to this expression");
  }

  std::set<std::string> macros_;
};

}  // namespace

std::vector<NodePtr> parse_template(const std::string& source) {
  std::vector<Token> tokens = tokenize_template(source);
  if (tokens.empty()) return {};
  return Parser(std::move(tokens)).run();
}

}  // namespace seed::models::chat
