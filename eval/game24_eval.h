// Competence of a model on the Game of 24 test puzzles (Tree of Thoughts'
// 24.csv rows 900-999), in the formats of tasks/corpus_formats.h:
//   propose  share of proposed step lines that are well-formed and exact;
//   value    share of sure/likely/impossible judgments that agree with the
//            exact solver, over the puzzles and every state one step away;
//   cot      single-sample chain-of-thought accuracy (answer checked by
//            tasks::check_expression).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "spec/api/engine.h"
#include "tasks/game24.h"

namespace seed::eval {

struct Game24EvalOptions {
  float temperature = 0.7f;  // for the chain of thought (propose/value are greedy)
  uint64_t seed = 0;
  int max_value_states = 0;  // 0 = every state one step from each puzzle
  // Called after each puzzle's proposals and chain of thought ("puzzles")
  // and after each value judgment ("value states"); empty: silent.
  std::function<void(const char* phase, int64_t done, int64_t total)> on_progress;
};

// One value judgment: the state as text, the solver's label, the model's
// first line (empty when it wrote nothing).
struct Game24ValueJudgment {
  std::string state;
  tasks::Game24Label solver;
  std::string model;
};

struct Game24EvalResult {
  int64_t step_lines = 0, valid_step_lines = 0;
  int64_t value_states = 0, value_agree = 0;
  int64_t value_confusion[3][3] = {};  // [solver label][model label], sure/likely/impossible
  int64_t value_unparsed = 0;
  std::vector<Game24ValueJudgment> value_judgments;  // in judging order
  int64_t cot_puzzles = 0, cot_correct = 0;
  double step_validity() const { return step_lines ? double(valid_step_lines) / step_lines : 0.0; }
  double value_agreement() const { return value_states ? double(value_agree) / value_states : 0.0; }
  double cot_accuracy() const { return cot_puzzles ? double(cot_correct) / cot_puzzles : 0.0; }
};

// Every completion comes from `engine` (the model's `ar` engine: what each
// prompt completes to is what that model writes), one request at a time,
// request i on stream i of options.seed.
Game24EvalResult evaluate_game24(spec::Engine& engine, const std::vector<tasks::Numbers>& puzzles,
                                 const Game24EvalOptions& options);

}  // namespace seed::eval
