#include "models/chat_template/expression_parser.h"

#include <cstdint>

#include "models/chat_template/builtins.h"

namespace seed::models::chat {

// Expressions, loosest first.

NodePtr ExpressionParser::parse_sequence(bool primary) {
  const Token& first = peek();
  NodePtr item = primary ? parse_primary() : parse_expression();
  if (!is_operator(",")) return item;
  NodePtr tuple = make(NodeKind::kTuple, first);
  tuple->children.push_back(std::move(item));
  while (is_operator(",")) {
    next();
    tuple->children.push_back(primary ? parse_primary() : parse_expression());
  }
  return tuple;
}

NodePtr ExpressionParser::parse_expression() {
  const Token& start = peek();
  const Nested nested(*this, start);
  NodePtr value = parse_or();
  if (!is_identifier("if")) return value;
  next();
  NodePtr test = parse_or();
  if (is_identifier("else")) {
    next();
    NodePtr node = make(NodeKind::kTernary, start);
    node->children.push_back(std::move(test));
    node->children.push_back(std::move(value));
    node->children.push_back(parse_expression());
    return node;
  }
  NodePtr node = make(NodeKind::kSelect, start);
  node->children.push_back(std::move(value));
  node->children.push_back(std::move(test));
  return node;
}

NodePtr ExpressionParser::parse_or() {
  NodePtr left = parse_and();
  while (is_identifier("or")) {
    const Token& op = next();
    left = binary(op, std::move(left), parse_and());
  }
  return left;
}

NodePtr ExpressionParser::parse_and() {
  NodePtr left = parse_not();
  while (is_identifier("and")) {
    const Token& op = next();
    left = binary(op, std::move(left), parse_not());
  }
  return left;
}

NodePtr ExpressionParser::parse_not() {
  if (!is_identifier("not")) return parse_comparison();
  const Token& op = next();
  NodePtr node = make(NodeKind::kUnary, op);
  node->name = "not";
  node->children.push_back(parse_not());
  return node;
}

NodePtr ExpressionParser::parse_comparison() {
  NodePtr left = parse_additive();
  while (true) {
    std::string op;
    const Token& token = peek();
    if (is_identifier("not") && at_ + 1 < tokens_.size() && tokens_[at_ + 1].kind == TokenKind::kIdentifier &&
        tokens_[at_ + 1].text == "in") {
      at_ += 2;
      op = "not in";
    } else if (is_identifier("in")) {
      next();
      op = "in";
    } else if (is_operator("==") || is_operator("!=") || is_operator("<") || is_operator(">") ||
               is_operator("<=") || is_operator(">=")) {
      op = next().text;
    } else {
      return left;
    }
    left = binary(token, std::move(left), parse_additive());
    left->name = op;
  }
}

NodePtr ExpressionParser::parse_additive() {
  NodePtr left = parse_multiplicative();
  while (is_operator("+") || is_operator("-") || is_operator("~")) {
    const Token& op = next();
    left = binary(op, std::move(left), parse_multiplicative());
  }
  return left;
}

NodePtr ExpressionParser::parse_multiplicative() {
  NodePtr left = parse_power();
  while (is_operator("*") || is_operator("/") || is_operator("//") || is_operator("%")) {
    const Token& op = next();
    left = binary(op, std::move(left), parse_power());
  }
  return left;
}

NodePtr ExpressionParser::parse_power() {
  NodePtr left = parse_test();
  while (is_operator("**")) {
    const Token& op = next();
    left = binary(op, std::move(left), parse_test());
  }
  return left;
}

NodePtr ExpressionParser::parse_test() {
  NodePtr operand = parse_filter();
  while (is_identifier("is")) {
    const Token& is = next();
    NodePtr node = make(NodeKind::kTest, is);
    if (is_identifier("not")) {
      next();
      node->flag = true;
    }
    const Token& name = next();
    if (name.kind != TokenKind::kIdentifier) fail(name, "expected a test name after 'is'");
    if (!is_known_test(name.text)) fail(name, "unsupported test '" + name.text + "'");
    node->name = name.text;
    node->children.push_back(std::move(operand));
    if (test_takes_argument(name.text)) {  // `is divisibleby(3)` or `is divisibleby 3`
      if (is_operator("(")) {
        for (NodePtr& argument : parse_arguments(false)) node->children.push_back(std::move(argument));
      } else {
        node->children.push_back(parse_member(parse_primary()));
      }
    } else if (is_operator("(")) {
      fail(peek(), "test '" + name.text + "' takes no arguments");
    }
    operand = std::move(node);
  }
  return operand;
}

NodePtr ExpressionParser::parse_filter() {
  NodePtr operand = parse_sign();
  while (is_operator("|")) {
    next();
    operand = parse_filter_call(std::move(operand));
  }
  return operand;
}

// `name` or `name(args)` after a | (or `{% filter %}`), applied to `operand`.
NodePtr ExpressionParser::parse_filter_call(NodePtr operand) {
  const Token& name = next();
  if (name.kind != TokenKind::kIdentifier) fail(name, "expected a filter name");
  if (!is_known_filter(name.text)) fail(name, "unsupported filter '" + name.text + "'");
  NodePtr node = make(NodeKind::kFilter, name);
  node->name = name.text;
  node->children.push_back(std::move(operand));
  if (is_operator("(")) {
    node->flag = true;
    for (NodePtr& argument : parse_arguments(false)) node->children.push_back(std::move(argument));
  }
  return node;
}

NodePtr ExpressionParser::parse_sign() {
  if (peek().kind == TokenKind::kUnary || is_operator("-") || is_operator("+")) {
    const Token& op = next();
    NodePtr node = make(NodeKind::kUnary, op);
    node->name = op.text;
    node->children.push_back(parse_sign());
    return node;
  }
  NodePtr member = parse_member(parse_primary());
  return is_operator("(") ? parse_call(std::move(member)) : std::move(member);
}

NodePtr ExpressionParser::parse_call(NodePtr callee) {
  const Token& open = peek();
  if (callee->kind == NodeKind::kName) {
    calls_.push_back({callee->name, callee->line, callee->column});
  } else if (callee->kind == NodeKind::kMember && !callee->flag) {
    if (!is_known_method(callee->name)) fail_node(*callee, "unsupported method '" + callee->name + "'");
  } else {
    fail(open, "unsupported call of a computed value");
  }
  NodePtr node = make_at(NodeKind::kCall, callee->line, callee->column);
  node->children.push_back(std::move(callee));
  for (NodePtr& argument : parse_arguments(false)) node->children.push_back(std::move(argument));
  NodePtr result = parse_member(std::move(node));
  return is_operator("(") ? parse_call(std::move(result)) : std::move(result);
}

std::vector<NodePtr> ExpressionParser::parse_arguments(bool parameters) {
  expect_operator("(");
  std::vector<NodePtr> arguments;
  bool keyword_seen = false;
  while (!is_operator(")")) {
    if (at_ >= tokens_.size()) fail_at(tokens_.back().line, tokens_.back().column, "missing ')'");
    if (is_operator("*") || is_operator("**")) fail(peek(), "unsupported argument unpacking");
    NodePtr argument = parse_expression();
    if (is_operator("=")) {
      if (argument->kind != NodeKind::kName) fail_node(*argument, "expected a name before '='");
      next();
      NodePtr keyword = make_at(NodeKind::kKeyword, argument->line, argument->column);
      keyword->name = argument->name;
      keyword->children.push_back(parse_expression());
      argument = std::move(keyword);
      keyword_seen = true;
    } else if (keyword_seen) {
      fail_node(*argument, "a positional argument follows a keyword argument");
    } else if (parameters && argument->kind != NodeKind::kName) {
      fail_node(*argument, "expected a parameter name");
    }
    arguments.push_back(std::move(argument));
    if (is_operator(",")) next();
  }
  next();
  return arguments;
}

NodePtr ExpressionParser::parse_member(NodePtr object) {
  while (is_operator(".") || is_operator("[")) {
    const Token& op = next();
    if (op.text == ".") {
      const Token& name = next();
      if (name.kind != TokenKind::kIdentifier && name.kind != TokenKind::kNumber) {
        fail(name, "expected a name after '.'");
      }
      NodePtr node = make(NodeKind::kMember, name);
      if (name.kind == TokenKind::kNumber) {
        node->flag = true;
        NodePtr index = make(NodeKind::kLiteral, name);
        index->literal = number_literal(name);
        node->children.push_back(std::move(object));
        node->children.push_back(std::move(index));
      } else {
        node->name = name.text;
        node->children.push_back(std::move(object));
      }
      object = std::move(node);
      continue;
    }
    // Subscript or slice: up to three parts separated by ':'.
    std::vector<NodePtr> parts(1);
    bool slice = false;
    while (!is_operator("]")) {
      if (at_ >= tokens_.size()) fail(op, "missing ']'");
      if (is_operator(":")) {
        next();
        slice = true;
        parts.emplace_back();
      } else {
        if (parts.back() != nullptr) fail(peek(), "expected ':' or ']'");
        parts.back() = parse_expression();
      }
    }
    next();
    if (!slice && parts[0] == nullptr) fail(op, "empty subscript");
    if (parts.size() > 3) fail(op, "a slice takes at most three parts");
    NodePtr node = make(slice ? NodeKind::kSlice : NodeKind::kMember, op);
    node->flag = true;
    node->children.push_back(std::move(object));
    if (slice) {
      parts.resize(3);
      for (NodePtr& part : parts) node->children.push_back(std::move(part));
    } else {
      node->children.push_back(std::move(parts[0]));
    }
    object = std::move(node);
  }
  return object;
}

NodePtr ExpressionParser::parse_primary() {
  if (at_ >= tokens_.size()) fail_at(tokens_.back().line, tokens_.back().column, "unexpected end of template");
  const Token& token = next();
  switch (token.kind) {
    case TokenKind::kNumber: {
      NodePtr node = make(NodeKind::kLiteral, token);
      node->literal = number_literal(token);
      return node;
    }
    case TokenKind::kString: {
      std::string text = token.text;
      while (peek_kind() == TokenKind::kString) text += next().text;  // adjacent literals concatenate
      NodePtr node = make(NodeKind::kLiteral, token);
      node->literal = Value::of(std::move(text));
      return node;
    }
    case TokenKind::kIdentifier: {
      NodePtr node = make(NodeKind::kName, token);
      node->name = token.text;
      return node;
    }
    case TokenKind::kOperator:
      if (token.text == "(") {
        NodePtr inner = parse_sequence(false);
        expect_operator(")");
        return inner;
      }
      if (token.text == "[") {
        NodePtr node = make(NodeKind::kArray, token);
        while (!is_operator("]")) {
          if (at_ >= tokens_.size()) fail(token, "missing ']'");
          node->children.push_back(parse_expression());
          if (is_operator(",")) next();
        }
        next();
        return node;
      }
      if (token.text == "{") {
        NodePtr node = make(NodeKind::kObject, token);
        while (!is_operator("}")) {
          if (at_ >= tokens_.size()) fail(token, "missing '}'");
          node->children.push_back(parse_expression());
          expect_operator(":");
          node->children.push_back(parse_expression());
          if (is_operator(",")) next();
        }
        next();
        return node;
      }
      break;
    default: break;
  }
  fail(token, "unexpected '" + token.text + "'");
}

NodePtr ExpressionParser::binary(const Token& op, NodePtr left, NodePtr right) {
  NodePtr node = make(NodeKind::kBinary, op);
  node->name = op.text;
  node->children.push_back(std::move(left));
  node->children.push_back(std::move(right));
  return node;
}

// A number token's value: an int, or a float if it has a '.'. One past
// int64 or double is a template error, not std::out_of_range.
Value ExpressionParser::number_literal(const Token& token) {
  try {
    if (token.text.find('.') != std::string::npos) return Value::of_real(std::stod(token.text));
    return Value::of(static_cast<int64_t>(std::stoll(token.text)));
  } catch (const std::out_of_range&) {
    fail(token, "number " + token.text + " is out of range");
  }
}

}  // namespace seed::models::chat
