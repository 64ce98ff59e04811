// Game of 24: arithmetic expressions, both ways. check_expression parses and
// evaluates a model's answer (recursive descent, exact rationals);
// expression_from_steps prints a step chain as one expression.
#include <algorithm>
#include <cctype>

#include "tasks/game24.h"

namespace seed::tasks {
namespace {

// Deeper nesting than this is not an answer to a 4-number puzzle; the limit
// keeps hostile input from exhausting the stack.
constexpr int kMaxNesting = 64;

// Recursive-descent parser and evaluator over
//   expr   := term (('+' | '-') term)*
//   term   := factor (('*' | '/') factor)*
//   factor := integer | '(' expr ')'
// It records every literal, and the first arithmetic failure (evaluation then
// continues on zeros so that the parse itself is still judged).
class ExpressionParser {
 public:
  explicit ExpressionParser(std::string_view text) : text_(text) {}

  // True iff the whole text is one expression.
  bool parse(Rational* value) {
    if (!parse_expr(value, 0)) return false;
    skip_spaces();
    if (pos_ != text_.size()) return fail("unexpected '" + std::string(1, text_[pos_]) + "'");
    return true;
  }

  const std::string& error() const { return error_; }
  const Numbers& literals() const { return literals_; }
  ArithmeticStatus arithmetic() const { return arithmetic_; }

 private:
  bool fail(std::string message) {
    if (error_.empty()) error_ = std::move(message);
    return false;
  }

  void skip_spaces() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }

  // Consumes `c` if it is the next non-space character.
  bool accept(char c) {
    skip_spaces();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }

  Rational combine(const RationalResult& result) {
    if (result.ok()) return result.value;
    if (arithmetic_ == ArithmeticStatus::kOk) arithmetic_ = result.status;
    return Rational();
  }

  bool parse_expr(Rational* value, int depth) {
    if (!parse_term(value, depth)) return false;
    for (;;) {
      const bool plus = accept('+');
      if (!plus && !accept('-')) return true;
      Rational rhs;
      if (!parse_term(&rhs, depth)) return false;
      *value = combine(plus ? add(*value, rhs) : sub(*value, rhs));
    }
  }

  bool parse_term(Rational* value, int depth) {
    if (!parse_factor(value, depth)) return false;
    for (;;) {
      const bool times = accept('*');
      if (!times && !accept('/')) return true;
      Rational rhs;
      if (!parse_factor(&rhs, depth)) return false;
      *value = combine(times ? mul(*value, rhs) : div(*value, rhs));
    }
  }

  bool parse_factor(Rational* value, int depth) {
    if (accept('(')) {
      if (depth + 1 > kMaxNesting) return fail("parentheses nested too deeply");
      if (!parse_expr(value, depth + 1)) return false;
      if (!accept(')')) return fail("missing ')'");
      return true;
    }
    skip_spaces();
    const size_t begin = pos_;
    while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) ++pos_;
    if (pos_ == begin) {
      return fail(pos_ < text_.size() ? "expected a number at '" + std::string(1, text_[pos_]) + "'"
                                      : "expected a number at the end");
    }
    const std::optional<Rational> literal = Rational::parse(text_.substr(begin, pos_ - begin));
    if (!literal) return fail("number too large");
    literals_.push_back(*literal);
    *value = *literal;
    return true;
  }

  std::string_view text_;
  size_t pos_ = 0;
  std::string error_;
  Numbers literals_;
  ArithmeticStatus arithmetic_ = ArithmeticStatus::kOk;
};

// One operand while a step chain is printed: its value, its text, and the
// precedence of its top operator (kAtom for a plain non-negative integer).
struct Operand {
  Rational value;
  std::string text;
  int precedence;
};

constexpr int kPrecedenceNeedsParens = 0;  // negative literal: always bracketed
constexpr int kPrecedenceAdd = 1;
constexpr int kPrecedenceMul = 2;
constexpr int kPrecedenceAtom = 3;

int op_precedence(Game24Op op) {
  return op == Game24Op::kAdd || op == Game24Op::kSub ? kPrecedenceAdd : kPrecedenceMul;
}

Operand literal_operand(const Rational& value) {
  if (value.num() < 0) return {value, value.to_string(), kPrecedenceNeedsParens};
  // "p/q" reads as a division, so it binds like one.
  return {value, value.to_string(), value.is_integer() ? kPrecedenceAtom : kPrecedenceMul};
}

std::string bracket(const Operand& operand, bool needed) {
  return needed ? "(" + operand.text + ")" : operand.text;
}

}  // namespace

std::optional<std::string> expression_from_steps(const Numbers& start,
                                                 const std::vector<Game24Step>& steps) {
  std::vector<Operand> operands;
  for (const Rational& n : start) operands.push_back(literal_operand(n));
  for (const Game24Step& step : steps) {
    const auto find = [&](const Rational& value, size_t skip) {
      for (size_t i = 0; i < operands.size(); ++i) {
        if (i != skip && operands[i].value == value) return i;
      }
      return operands.size();
    };
    const size_t ia = find(step.a, operands.size());
    if (ia == operands.size()) return std::nullopt;
    const size_t ib = find(step.b, ia);
    if (ib == operands.size()) return std::nullopt;
    const RationalResult result = game24_apply(step.a, step.op, step.b);
    if (!result.ok() || result.value != step.result) return std::nullopt;
    // The left operand needs brackets below the operator's precedence; the
    // right one also at equal precedence when the operator does not
    // associate that way: a - (b + c), a / (b * c).
    const int p = op_precedence(step.op);
    const bool right_strict = step.op == Game24Op::kSub || step.op == Game24Op::kDiv;
    const Operand& a = operands[ia];
    const Operand& b = operands[ib];
    Operand combined{result.value,
                     bracket(a, a.precedence < p) + " " + game24_op_symbol(step.op) + " " +
                         bracket(b, b.precedence < p || (right_strict && b.precedence == p)),
                     p};
    operands.erase(operands.begin() + static_cast<std::ptrdiff_t>(std::max(ia, ib)));
    operands.erase(operands.begin() + static_cast<std::ptrdiff_t>(std::min(ia, ib)));
    operands.push_back(std::move(combined));
  }
  if (operands.size() != 1) return std::nullopt;
  return operands[0].text;
}

ExpressionCheck check_expression(std::string_view expression, const Numbers& puzzle) {
  ExpressionCheck check;
  expression = expression.substr(0, expression.find('='));
  ExpressionParser parser(expression);
  Rational value;
  if (!parser.parse(&value)) {
    check.verdict = ExpressionVerdict::kUnparsable;
    check.reason = parser.error();
    return check;
  }
  Numbers used = parser.literals();
  Numbers wanted = puzzle;
  std::sort(used.begin(), used.end());
  std::sort(wanted.begin(), wanted.end());
  if (used != wanted) {
    check.verdict = ExpressionVerdict::kWrongNumbers;
    check.reason = "uses " + numbers_text(used) + ", the puzzle is " + numbers_text(wanted);
    return check;
  }
  if (parser.arithmetic() != ArithmeticStatus::kOk) {
    check.verdict = ExpressionVerdict::kArithmeticError;
    check.reason = parser.arithmetic() == ArithmeticStatus::kDivisionByZero ? "division by zero"
                                                                            : "overflow";
    return check;
  }
  check.value = value;
  if (value != Rational(kGame24Target)) {
    check.verdict = ExpressionVerdict::kNotTwentyFour;
    check.reason = "evaluates to " + value.to_string();
    return check;
  }
  check.verdict = ExpressionVerdict::kCorrect;
  return check;
}

std::optional<std::string> extract_answer(std::string_view completion) {
  std::optional<std::string> answer;
  constexpr std::string_view kPrefix = "answer:";
  while (!completion.empty()) {
    const size_t end = completion.find('\n');
    std::string_view line = completion.substr(0, end);
    completion = end == std::string_view::npos ? std::string_view() : completion.substr(end + 1);
    while (!line.empty() && std::isspace(static_cast<unsigned char>(line.front()))) line.remove_prefix(1);
    if (line.size() < kPrefix.size()) continue;
    bool match = true;
    for (size_t i = 0; i < kPrefix.size(); ++i) {
      match = match && std::tolower(static_cast<unsigned char>(line[i])) == kPrefix[i];
    }
    if (!match) continue;
    std::string_view rest = line.substr(kPrefix.size());
    rest = rest.substr(0, rest.find('='));
    while (!rest.empty() && std::isspace(static_cast<unsigned char>(rest.front()))) rest.remove_prefix(1);
    while (!rest.empty() && std::isspace(static_cast<unsigned char>(rest.back()))) rest.remove_suffix(1);
    answer = std::string(rest);
  }
  return answer;
}

}  // namespace seed::tasks
