// Checkers: how a task scores a search's final answer, registered by name.
//
// task.json names one ("checker": {"name": "game24"}); a new task that uses
// an existing checker needs no compilation. Each checker reads the gold data
// it needs from the problem's fields (Problem, tasks/task_data.h):
//
//   numeric      the last number of the answer equals the number after
//                "####" in field `field` (default "answer"), GSM8K-style;
//                commas in numbers are ignored, values compared exactly as
//                decimals
//   game24       the "Answer:" line's expression uses each number of field
//                `field` (default "input") once and equals 24 in exact
//                rational arithmetic (tasks/game24.h)
//   blocksworld  the answer's action lines, simulated from the start state of
//                field `field` (default "statement", blocks_statement text),
//                are legal and reach the goal (tasks/blocksworld.h)
//   exact        the trimmed answer equals the trimmed field `field`
//   regex        with `field`: the first match of `pattern` in the answer
//                (its first group if it has one) equals the trimmed field;
//                without: correct iff `pattern` matches the answer
//   paragraph-endings  creative writing: the passage after "Passage:" has one
//                paragraph per sentence of field `field` (default "input"),
//                paragraph i ending with sentence i
//
// Checkers read model output, so they never throw on a malformed answer: it
// is an expected outcome, reported as incorrect with a reason. They are
// immutable after construction and thread-safe.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tasks/task_data.h"

namespace seed::tasks {

struct CheckerConfig {
  std::string name;     // a name of checker_names()
  std::string field;    // the problem field holding the gold data; "" = the checker's default
  std::string pattern;  // regex only: ECMAScript syntax
};

struct CheckResult {
  bool correct = false;
  std::string answer;  // the answer as extracted ("(13 - 9) * (10 - 4)", "18"); "" if none
  std::string reason;  // why it is wrong, for logs; empty when correct
};

class Checker {
 public:
  virtual ~Checker() = default;

  // The answer part of a final text, as check() reads it; no gold data
  // needed, so the search may use it (self-consistency votes on it).
  virtual std::string extract(std::string_view text) const = 0;

  // Scores `text` (a generated answer or a chosen path's steps) against the
  // gold data of `problem`. Requires the checker's field in `problem`
  // (validated when a task loads: required_field()).
  virtual CheckResult check(const Problem& problem, std::string_view text) const = 0;

  // Whether the steps so far already reach the task's goal, as the task's
  // environment can tell without the gold answer (Blocksworld simulates the
  // plan); a search stops expanding such a path. Default: never.
  virtual bool goal_reached(const Problem& problem, std::string_view steps) const { return false; }

  // The problem field check() reads; "" if none.
  virtual std::string required_field() const = 0;
};

// The registered names, in documentation order.
const std::vector<std::string>& checker_names();

// Throws kInvalidArgument for an unknown name (listing the known ones), a
// regex without a pattern or with an invalid one, and a pattern given to a
// checker that takes none.
std::unique_ptr<Checker> make_checker(const CheckerConfig& config);

}  // namespace seed::tasks
