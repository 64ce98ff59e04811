// Game of 24: parsing, step enumeration, step checking and the exact solver.
// The expression checker lives in game24_expression.cpp.
#include "tasks/game24.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <set>
#include <sstream>

#include "models/base/error.h"
#include "models/base/trim.h"

namespace seed::tasks {
namespace {

std::vector<std::string_view> split_whitespace(std::string_view text) {
  std::vector<std::string_view> tokens;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    const size_t begin = i;
    while (i < text.size() && !std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    if (i > begin) tokens.push_back(text.substr(begin, i - begin));
  }
  return tokens;
}

std::optional<Game24Op> parse_op(std::string_view token) {
  if (token == "+") return Game24Op::kAdd;
  if (token == "-") return Game24Op::kSub;
  if (token == "*") return Game24Op::kMul;
  if (token == "/") return Game24Op::kDiv;
  return std::nullopt;
}

// Removes one occurrence of `value` from `numbers`; false if absent.
bool remove_one(Numbers* numbers, const Rational& value) {
  const auto it = std::find(numbers->begin(), numbers->end(), value);
  if (it == numbers->end()) return false;
  numbers->erase(it);
  return true;
}

Numbers sorted(Numbers numbers) {
  std::sort(numbers.begin(), numbers.end());
  return numbers;
}

}  // namespace

std::optional<Numbers> parse_numbers(std::string_view text) {
  const std::vector<std::string_view> tokens = split_whitespace(text);
  if (tokens.empty()) return std::nullopt;
  Numbers numbers;
  for (const std::string_view token : tokens) {
    const std::optional<Rational> value = Rational::parse(token);
    if (!value) return std::nullopt;
    numbers.push_back(*value);
  }
  return numbers;
}

Numbers parse_puzzle(std::string_view text, std::string_view where) {
  const std::string source = where.empty() ? std::string() : std::string(where) + ": ";
  const std::optional<Numbers> numbers = parse_numbers(text);
  SEED_CHECK(numbers.has_value(), kInvalidArgument)
      << source << "Game-of-24 puzzle '" << text << "': expected integers separated by spaces, e.g. '4 9 10 13'";
  for (const Rational& n : *numbers) {
    SEED_CHECK(n.is_integer(), kInvalidArgument)
        << source << "Game-of-24 puzzle '" << text << "': " << n.to_string() << " is not an integer";
  }
  return *numbers;
}

std::string numbers_text(Numbers numbers) {
  std::sort(numbers.begin(), numbers.end());
  std::string text;
  for (const Rational& n : numbers) {
    if (!text.empty()) text += ' ';
    text += n.to_string();
  }
  return text;
}

std::vector<Numbers> load_game24_csv(const std::string& path) {
  std::ifstream in(path);
  SEED_CHECK(in.good(), kNotFound) << "cannot open Game-of-24 puzzles '" << path
                                   << "'; pass the path of Tree of Thoughts' 24.csv";
  std::string line;
  SEED_CHECK(static_cast<bool>(std::getline(in, line)), kInvalidArgument)
      << path << ": empty file, expected a CSV header with a 'Puzzles' column";
  std::vector<std::string> header;
  std::stringstream header_stream(line);
  for (std::string cell; std::getline(header_stream, cell, ',');) header.emplace_back(trim(cell));
  const auto column_it = std::find(header.begin(), header.end(), "Puzzles");
  SEED_CHECK(column_it != header.end(), kInvalidArgument)
      << path << ": no 'Puzzles' column in the header '" << line << "'";
  const size_t column = static_cast<size_t>(column_it - header.begin());
  std::vector<Numbers> puzzles;
  for (size_t line_no = 2; std::getline(in, line); ++line_no) {
    if (trim(line).empty()) continue;
    std::vector<std::string> cells;
    std::stringstream row(line);
    for (std::string cell; std::getline(row, cell, ',');) cells.push_back(cell);
    SEED_CHECK(column < cells.size(), kInvalidArgument)
        << path << ":" << line_no << ": row has no 'Puzzles' cell";
    puzzles.push_back(parse_puzzle(cells[column], path + ":" + std::to_string(line_no)));
  }
  return puzzles;
}

char game24_op_symbol(Game24Op op) {
  switch (op) {
    case Game24Op::kAdd:
      return '+';
    case Game24Op::kSub:
      return '-';
    case Game24Op::kMul:
      return '*';
    case Game24Op::kDiv:
      return '/';
  }
  return '?';  // unreachable
}

RationalResult game24_apply(const Rational& a, Game24Op op, const Rational& b) {
  switch (op) {
    case Game24Op::kAdd:
      return add(a, b);
    case Game24Op::kSub:
      return sub(a, b);
    case Game24Op::kMul:
      return mul(a, b);
    case Game24Op::kDiv:
      return div(a, b);
  }
  return RationalResult{ArithmeticStatus::kOverflow, Rational()};  // unreachable
}

std::string Game24Step::text() const {
  return a.to_string() + " " + game24_op_symbol(op) + " " + b.to_string() + " = " +
         result.to_string() + " (left: " + numbers_text(left) + ")";
}

std::vector<Game24Step> game24_next_steps(const Numbers& numbers) {
  const Numbers state = sorted(numbers);
  std::vector<Game24Step> steps;
  std::set<std::string> seen;
  for (size_t i = 0; i < state.size(); ++i) {
    for (size_t j = i + 1; j < state.size(); ++j) {
      const Rational& lo = state[i];
      const Rational& hi = state[j];
      Numbers rest;
      for (size_t k = 0; k < state.size(); ++k) {
        if (k != i && k != j) rest.push_back(state[k]);
      }
      const struct {
        const Rational& a;
        Game24Op op;
        const Rational& b;
      } candidates[] = {
          {lo, Game24Op::kAdd, hi}, {hi, Game24Op::kSub, lo}, {lo, Game24Op::kSub, hi},
          {lo, Game24Op::kMul, hi}, {hi, Game24Op::kDiv, lo}, {lo, Game24Op::kDiv, hi},
      };
      for (const auto& c : candidates) {
        const RationalResult r = game24_apply(c.a, c.op, c.b);
        if (!r.ok()) continue;
        Game24Step step{c.a, c.op, c.b, r.value, rest};
        step.left.push_back(r.value);
        std::sort(step.left.begin(), step.left.end());
        if (seen.insert(step.text()).second) steps.push_back(std::move(step));
      }
    }
  }
  return steps;
}

StepCheck check_step(std::string_view line, const Numbers& state) {
  StepCheck check;
  line = trim(line);
  const size_t open = line.find("(left:");
  if (open == std::string_view::npos || line.back() != ')') {
    check.reason = "expected 'a op b = c (left: ...)'";
    return check;
  }
  const std::vector<std::string_view> head = split_whitespace(line.substr(0, open));
  const std::optional<Numbers> left =
      parse_numbers(line.substr(open + 6, line.size() - 1 - (open + 6)));
  if (head.size() != 5 || head[3] != "=" || !left) {
    check.reason = "expected 'a op b = c (left: ...)'";
    return check;
  }
  const std::optional<Rational> a = Rational::parse(head[0]);
  const std::optional<Game24Op> op = parse_op(head[1]);
  const std::optional<Rational> b = Rational::parse(head[2]);
  const std::optional<Rational> c = Rational::parse(head[4]);
  if (!a || !op || !b || !c) {
    check.reason = "operands must be integers or p/q and op one of + - * /";
    return check;
  }
  check.step = Game24Step{*a, *op, *b, *c, sorted(*left)};
  Numbers rest = state;
  if (!remove_one(&rest, *a) || !remove_one(&rest, *b)) {
    check.verdict = StepVerdict::kNotInState;
    check.reason = "uses a number not in the state " + numbers_text(state);
    return check;
  }
  const RationalResult r = game24_apply(*a, *op, *b);
  if (!r.ok() || r.value != *c) {
    check.verdict = StepVerdict::kWrongResult;
    check.reason = r.ok() ? "the result is " + r.value.to_string() : "division by zero or overflow";
    return check;
  }
  rest.push_back(*c);
  if (sorted(rest) != check.step->left) {
    check.verdict = StepVerdict::kWrongLeft;
    check.reason = "the numbers left should be " + numbers_text(rest);
    return check;
  }
  check.verdict = StepVerdict::kValid;
  return check;
}

const char* game24_label_name(Game24Label label) {
  switch (label) {
    case Game24Label::kSure:
      return "sure";
    case Game24Label::kLikely:
      return "likely";
    case Game24Label::kImpossible:
      return "impossible";
  }
  return "?";  // unreachable
}

Game24Solver::Entry Game24Solver::lookup(const Numbers& numbers) {
  const std::string key = numbers_text(numbers);
  const auto it = memo_.find(key);
  if (it != memo_.end()) return it->second;
  Entry entry;
  if (numbers.size() == 1) {
    entry.any = entry.integer_only = numbers[0] == Rational(kGame24Target);
  } else {
    for (const Game24Step& step : game24_next_steps(numbers)) {
      const Entry child = lookup(step.left);
      entry.any = entry.any || child.any;
      entry.integer_only = entry.integer_only || (step.result.is_integer() && child.integer_only);
      if (entry.integer_only) break;  // implies any
    }
  }
  memo_.emplace(key, entry);
  return entry;
}

bool Game24Solver::solvable(const Numbers& numbers) { return lookup(numbers).any; }

Game24Label Game24Solver::label(const Numbers& numbers) {
  const Entry entry = lookup(numbers);
  if (entry.integer_only) return Game24Label::kSure;
  return entry.any ? Game24Label::kLikely : Game24Label::kImpossible;
}

}  // namespace seed::tasks
