// Synthetic training corpora for the project's tiny models (models/zoo).
//
// Each example is a prompt (a template of corpus_formats.h, filled) and the
// completion the model should learn; the trainer masks the prompt's loss.
// Every completion is correct by construction: steps come from
// game24_next_steps, labels from Game24Solver, plans and action labels from
// Blocksworld's breadth-first search. Kinds:
//
//   game24 / propose          a state (4, 3 or 2 numbers, mostly on a path
//                             to 24) -> up to 8 legal steps, chosen first
//                             among those that keep the state solvable, then
//                             preferring non-negative results (listed in
//                             game24_next_steps order)
//   game24 / value            a state (1-4 numbers) -> sure/likely/impossible,
//                             labelled by the solver, preceded by
//                             the worked check for 2 or 3 numbers
//   game24 / cot              a solvable puzzle -> a random solution's steps
//                             (non-negative results where possible) and
//                             "Answer: <expression> = 24"
//   game24 / prm              a puzzle and 1-3 steps (half on a path to 24),
//                             each ending in the step tag, a whole path
//                             half the time followed by its Answer line ->
//                             "+" if the numbers left can still make 24 (the
//                             answer is right), else "-"
//   game24 / prm_states       as prm, for every step from each training
//                             row of 24.csv (three numbers left) and, from
//                             each of those, every step that leaves two
//                             numbers that can make 24 and one random step
//                             that leaves two that cannot
//   blocksworld / next_action an instance and a plan prefix -> one legal
//                             action, from an optimal plan 3 times in 4
//   blocksworld / evaluate_action  prefix + one action -> good (it begins an
//                             optimal plan from there) or bad; half each
//   blocksworld / plan        an instance -> an optimal plan + [PLAN END]
//
// Puzzles: training rows of ToT's 24.csv and random 4-number multisets
// (1..13). The 100 test puzzles (rows 900-999) never appear as the input of
// any example, as multisets: rows equal to one are dropped from the training
// rows and random draws equal to one are redrawn. (Later states hold fewer
// than 4 numbers, so they cannot equal a puzzle.)
//
// Determinism: the corpus is a pure function of the config (the seed, the
// counts, the CSV's content), identical on every platform (random_draw.h).
// Each kind draws from its own stream, so changing one count leaves the other
// kinds' examples unchanged. The functions share no state: concurrent calls
// are safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tasks/game24.h"

namespace seed::tasks {

struct CorpusExample {
  std::string task;        // "game24" | "blocksworld"
  std::string kind;        // "propose" | "value" | "cot" | "next_action" | ...
  std::string prompt;      // the model's input
  std::string completion;  // what the model learns to write
};

struct CorpusConfig {
  uint64_t seed = 0;        // every draw derives from it
  std::string game24_csv;   // ToT's 24.csv; required when a game24 count > 0

  // Examples per kind (0 disables a kind).
  int game24_propose = 3000;
  int game24_value = 3000;
  int game24_cot = 2000;
  int game24_prm = 0;  // a process reward model's corpus (models/zoo/tiny-prm)
  // The enumerated step-reward states (kind prm_states): a few tens of
  // thousands of examples, so a count would only truncate them.
  bool game24_prm_states = false;
  int blocksworld_next_action = 700;
  int blocksworld_evaluate_action = 700;
  int blocksworld_plan = 600;

  // Game of 24: percent of puzzles drawn at random (4 numbers in
  // [1, game24_random_max]) rather than from 24.csv's training rows. Random
  // puzzles widen coverage; the CSV's rows match the test distribution.
  int game24_random_percent = 50;
  int game24_random_max = 13;
  int game24_propose_lines = 8;  // steps listed per propose completion
  // Percent of value states reached by steps that keep a solvable puzzle
  // solvable, else by random steps. Labels keep the frequencies this gives
  // (no class balancing): a balanced label-only corpus taught the model to
  // call most impossible states sure, while around real puzzles about 3 in 4
  // states are impossible and "likely" is rare.
  int game24_value_on_path_percent = 25;

  // Blocksworld instances have blocks_min..blocks_max blocks (2..kBlocksMax).
  int blocks_min = 3;
  int blocks_max = 5;

  // Throws kInvalidArgument naming the field: a negative count, a percent
  // outside [0, 100], game24_random_max < 1, game24_propose_lines < 1, a bad
  // block range, or no game24_csv while a game24 count is positive.
  void validate() const;
  // Whether any Game-of-24 kind is asked for (then game24_csv is read).
  bool uses_game24() const {
    return game24_propose + game24_value + game24_cot + game24_prm > 0 || game24_prm_states;
  }
};

// ToT's split of 24.csv rows (load_game24_csv): `test` holds rows
// [kGame24TestBegin, kGame24TestEnd), `train` every other row whose multiset
// is not a test puzzle. Throws kInvalidArgument if there are fewer than
// kGame24TestEnd rows.
struct Game24Split {
  std::vector<Numbers> train;
  std::vector<Numbers> test;
};
Game24Split split_game24_puzzles(const std::vector<Numbers>& puzzles);

// The corpus: every kind's examples, shuffled together. Validates `config`
// first and reads config.game24_csv (errors: CorpusConfig::validate,
// load_game24_csv).
std::vector<CorpusExample> generate_corpus(const CorpusConfig& config);

// The examples of one kind only, in generation order: kind is one of the six
// names above; the count is taken from `config`. Throws kInvalidArgument for
// an unknown kind.
std::vector<CorpusExample> generate_corpus_kind(const CorpusConfig& config, std::string_view kind);

// Writes one JSON object per line: {"task", "kind", "prompt", "completion"}.
// Throws kIo if the file cannot be written (it may then be partly written).
void write_corpus_jsonl(const std::string& path, const std::vector<CorpusExample>& examples);

// Fills each {name} of `tmpl` with its value. Throws kInvalidArgument if the
// template names a field not given, or a given field is not in the template.
std::string render_prompt(std::string_view tmpl,
                          const std::vector<std::pair<std::string_view, std::string>>& fields);

}  // namespace seed::tasks
