// Game of 24: states, steps, an exact solver and the answer checker.
//
// A state is a multiset of exact rationals ("4 9 10 13" at the start). A step
// takes two of the remaining numbers a, b and replaces them by a op b, op in
// + - * /, exactly as Tree of Thoughts (Yao et al., 2023) lets its proposer do:
// both orders of - and /, negative and fractional results allowed, division by
// zero skipped. A step prints as ToT prints it, with numbers as integers or
// "p/q" and the numbers left sorted ascending:
//
//   4 + 9 = 13 (left: 10 13 13)
//
// Users: the corpus generator (tasks/corpus.h) and the game24 task's
// checker (tasks/checkers.h). Everything here is torch-free, exact and deterministic.
// Free functions are thread-safe; a Game24Solver is not (it owns a memo).
//
// Errors: functions that read the project's own inputs (parse_puzzle, the CSV
// loader) throw seed::Error kInvalidArgument / kNotFound. Functions that read
// model output (parse_numbers, check_step, check_expression, extract_answer)
// never throw: a malformed answer is an expected outcome, returned as a value.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tasks/rational.h"

namespace seed::tasks {

using Numbers = std::vector<Rational>;  // a multiset; order is not meaningful

inline constexpr int64_t kGame24Target = 24;

// "4 9 10 13": whitespace-separated Rational::parse tokens. nullopt when the
// text is empty or any token is malformed. Never throws.
std::optional<Numbers> parse_numbers(std::string_view text);

// A puzzle as the data files write it: one or more integers separated by
// spaces. Throws kInvalidArgument naming the text otherwise, after `where`
// (a file and line, say) when it is given.
Numbers parse_puzzle(std::string_view text, std::string_view where = {});

// The numbers of a Game-of-24 puzzle (its later states hold fewer).
inline constexpr size_t kGame24PuzzleNumbers = 4;

// The numbers sorted ascending, space-separated: the canonical state text
// ("1/2 4 13"), also the multiset key used to compare puzzles.
std::string numbers_text(Numbers numbers);

// The puzzles of a Tree-of-Thoughts 24.csv file (column "Puzzles"), in file
// order. Throws kNotFound if the file cannot be opened and kInvalidArgument
// (naming the line) if the column is missing or a puzzle is malformed.
std::vector<Numbers> load_game24_csv(const std::string& path);

// The shipped puzzles (Tree of Thoughts' 24.csv, its Puzzles column, in
// its order), relative to the repository root, where `seed` commands run.
inline constexpr char kGame24CsvPath[] = "tasks/game24/24.csv";

// The ToT test split: 0-based rows [kGame24TestBegin, kGame24TestEnd) of
// 24.csv. Never train on them: they are what the task reports accuracy on.
inline constexpr size_t kGame24TestBegin = 900;
inline constexpr size_t kGame24TestEnd = 1000;

enum class Game24Op { kAdd, kSub, kMul, kDiv };

char game24_op_symbol(Game24Op op);  // '+', '-', '*', '/'

// a op b, exactly; the status says division by zero or overflow.
RationalResult game24_apply(const Rational& a, Game24Op op, const Rational& b);

struct Game24Step {
  Rational a;
  Game24Op op = Game24Op::kAdd;
  Rational b;
  Rational result;  // a op b, exactly
  Numbers left;     // the state after the step, sorted ascending (holds result)

  // "a op b = result (left: ...)".
  std::string text() const;
};

// Every distinct legal step from `numbers` (at least two numbers, else none):
// for each pair of values a <= b, in ascending pair order: a + b, b - a,
// a - b, a * b, b / a, a / b; duplicates (same text) and divisions by zero
// (or results overflowing int64) are skipped.
std::vector<Game24Step> game24_next_steps(const Numbers& numbers);

enum class StepVerdict {
  kValid,
  kUnparsable,   // not of the form "a op b = c (left: ...)"
  kNotInState,   // a and b are not two of the state's numbers
  kWrongResult,  // c != a op b (or division by zero)
  kWrongLeft,    // the left list is not the state after the step
};

struct StepCheck {
  StepVerdict verdict = StepVerdict::kUnparsable;
  std::string reason;               // empty when valid
  std::optional<Game24Step> step;   // set when the line parsed
  bool valid() const { return verdict == StepVerdict::kValid; }
};

// Checks one proposed step line (surrounding spaces ignored; "left" may be in
// any order) against the state it was proposed for. Never throws.
StepCheck check_step(std::string_view line, const Numbers& state);

// The state-value label, decided by the exact solver:
//   sure       the numbers can reach 24 through integer intermediates only
//              (every step result on some solution is an integer);
//   likely     they can reach 24, but every solution passes through a fraction;
//   impossible they cannot reach 24.
// One number is sure iff it is 24. Two numbers are never likely (their only
// step result is 24 itself).
enum class Game24Label { kSure, kLikely, kImpossible };

const char* game24_label_name(Game24Label label);  // "sure", "likely", "impossible"

// The value prompt's worked check: for two or three numbers, lines that decide
// the label mechanically, so that a small model computes it instead of
// guessing it in one token (tasks/corpus_formats.h shows the completion).
//   two numbers "4 20": what the pair makes, then whether 24 is among them:
//     4 20: 24 16 -16 80 5 1/5 | 24
//   three numbers: for each pair (largest third number first), the partners
//   that make 24 with the third number z (24 - z, 24 + z, z - 24, then for
//   z != 0 24 / z, 24 * z, z / 24), what the pair makes (game24_next_steps
//   order, repeats dropped), and the
//   first partner the pair makes (an integer if any), else "no":
//     9: 15 33 -15 8/3 216 3/8 | 4 6: 10 2 -2 24 3/2 2/3 | no
//   The check stops at the first integer match (sure); a fraction match only
//   makes it likely. One or four numbers have no work lines.
// `label` equals Game24Solver::label for one to three numbers.
struct Game24ValueCheck {
  std::string work;  // the lines, each ending in '\n'; empty for 1 or 4+ numbers
  Game24Label label = Game24Label::kImpossible;
};
Game24ValueCheck game24_value_check(const Numbers& numbers);

// Exact solver with memoisation over canonical (sorted) states. A 4-number
// puzzle reaches at most a few thousand distinct states, so one solver can
// serve a whole corpus. Not thread-safe: use one per thread.
class Game24Solver {
 public:
  bool solvable(const Numbers& numbers);
  Game24Label label(const Numbers& numbers);

 private:
  struct Entry {
    bool any = false;           // reachable at all
    bool integer_only = false;  // reachable with integer step results only
  };
  Entry lookup(const Numbers& numbers);

  std::unordered_map<std::string, Entry> memo_;
};

// Replays `steps` from `start` and returns the expression they compute, with
// only the parentheses precedence needs ("(13 - 9) * (10 - 4)"). nullopt if a
// step uses a number not present at that point, states a wrong result, or the
// steps leave more than one number.
std::optional<std::string> expression_from_steps(const Numbers& start,
                                                 const std::vector<Game24Step>& steps);

enum class ExpressionVerdict {
  kCorrect,
  kUnparsable,       // not an expression of integers, + - * / and parentheses
  kWrongNumbers,     // does not use each puzzle number exactly once
  kArithmeticError,  // divides by zero or overflows int64
  kNotTwentyFour,    // well-formed and uses the numbers, but the value is not 24
};

struct ExpressionCheck {
  ExpressionVerdict verdict = ExpressionVerdict::kUnparsable;
  std::string reason;             // what is wrong, for logs; empty when correct
  std::optional<Rational> value;  // set when the expression was evaluated
  bool correct() const { return verdict == ExpressionVerdict::kCorrect; }
};

// The Game-of-24 checker: `expression` uses + - * /, parentheses and
// non-negative integer literals (no unary minus), with the usual precedence;
// anything from the first '=' on is ignored, as ToT's checker does
// ("(13 - 9) * (10 - 4) = 24" is accepted). Correct iff the literals are the
// puzzle's numbers as a multiset and the exact value is 24. Never throws.
ExpressionCheck check_expression(std::string_view expression, const Numbers& puzzle);

// The expression of the last line of `completion` that starts with "Answer:"
// (case-insensitive), with the "= 24" tail removed; nullopt if no such line.
std::optional<std::string> extract_answer(std::string_view completion);

}  // namespace seed::tasks
