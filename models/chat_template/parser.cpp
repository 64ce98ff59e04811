#include "models/chat_template/parser.h"

#include <cstdint>
#include <set>

#include "models/base/error.h"
#include "models/chat_template/builtins.h"

namespace seed::models::chat {
namespace {

class Parser {
 public:
  explicit Parser(std::vector<Token> tokens) : tokens_(std::move(tokens)) {}

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
  struct Site {
    std::string name;
    int line, column;
  };

  // Blocks, elifs and expressions nest by recursion here and in the
  // renderer: a template nested deeper than kMaxNesting is refused, where it
  // would otherwise overflow the stack.
  class Nested {
   public:
    Nested(Parser& parser, const Token& at) : parser_(parser) {
      if (++parser_.depth_ > kMaxNesting) {
        --parser_.depth_;
        fail(at, "nested more than " + std::to_string(kMaxNesting) + " levels deep");
      }
    }
    ~Nested() { --parser_.depth_; }
    Nested(const Nested&) = delete;
    Nested& operator=(const Nested&) = delete;

   private:
    Parser& parser_;
  };

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

  // Expressions, loosest first.

  NodePtr parse_sequence(bool primary) {
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

  NodePtr parse_expression() {
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

  NodePtr parse_or() {
    NodePtr left = parse_and();
    while (is_identifier("or")) {
      const Token& op = next();
      left = binary(op, std::move(left), parse_and());
    }
    return left;
  }

  NodePtr parse_and() {
    NodePtr left = parse_not();
    while (is_identifier("and")) {
      const Token& op = next();
      left = binary(op, std::move(left), parse_not());
    }
    return left;
  }

  NodePtr parse_not() {
    if (!is_identifier("not")) return parse_comparison();
    const Token& op = next();
    NodePtr node = make(NodeKind::kUnary, op);
    node->name = "not";
    node->children.push_back(parse_not());
    return node;
  }

  NodePtr parse_comparison() {
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

  NodePtr parse_additive() {
    NodePtr left = parse_multiplicative();
    while (is_operator("+") || is_operator("-") || is_operator("~")) {
      const Token& op = next();
      left = binary(op, std::move(left), parse_multiplicative());
    }
    return left;
  }

  NodePtr parse_multiplicative() {
    NodePtr left = parse_power();
    while (is_operator("*") || is_operator("/") || is_operator("//") || is_operator("%")) {
      const Token& op = next();
      left = binary(op, std::move(left), parse_power());
    }
    return left;
  }

  NodePtr parse_power() {
    NodePtr left = parse_test();
    while (is_operator("**")) {
      const Token& op = next();
      left = binary(op, std::move(left), parse_test());
    }
    return left;
  }

  NodePtr parse_test() {
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

  NodePtr parse_filter() {
    NodePtr operand = parse_sign();
    while (is_operator("|")) {
      next();
      operand = parse_filter_call(std::move(operand));
    }
    return operand;
  }

  // `name` or `name(args)` after a | (or `{% filter %}`), applied to `operand`.
  NodePtr parse_filter_call(NodePtr operand) {
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

  NodePtr parse_sign() {
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

  NodePtr parse_call(NodePtr callee) {
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

  std::vector<NodePtr> parse_arguments(bool parameters) {
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

  NodePtr parse_member(NodePtr object) {
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

  NodePtr parse_primary() {
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

  NodePtr binary(const Token& op, NodePtr left, NodePtr right) {
    NodePtr node = make(NodeKind::kBinary, op);
    node->name = op.text;
    node->children.push_back(std::move(left));
    node->children.push_back(std::move(right));
    return node;
  }

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

  // A number token's value: an int, or a float if it has a '.'. One past
  // int64 or double is a template error, not std::out_of_range.
  static Value number_literal(const Token& token) {
    try {
      if (token.text.find('.') != std::string::npos) return Value::of_real(std::stod(token.text));
      return Value::of(static_cast<int64_t>(std::stoll(token.text)));
    } catch (const std::out_of_range&) {
      fail(token, "number " + token.text + " is out of range");
    }
  }

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
  std::set<std::string> macros_;
  std::vector<Site> calls_;
};

}  // namespace

std::vector<NodePtr> parse_template(const std::string& source) {
  std::vector<Token> tokens = tokenize_template(source);
  if (tokens.empty()) return {};
  return Parser(std::move(tokens)).run();
}

}  // namespace seed::models::chat
