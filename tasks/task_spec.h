// TaskSpec: a task folder's task.json as Task::load reads and validates it
// (tasks/task.h describes each field, tasks/README.md in full): the prompts
// and how each is run, thought generation, state evaluation, the search
// defaults, the checker and the chat settings. Plain values, copied freely.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/base/sampling.h"
#include "tasks/checkers.h"
#include "tasks/step_aggregate.h"
#include "tasks/task_data.h"

namespace seed::tasks {

// One prompt and how to run it.
struct PromptSpec {
  std::string prompt;  // a template (prompt_template.h)
  std::vector<std::string> stop;
  int64_t max_new_tokens = 128;
  SamplingParams sampling;
  std::string output = "thought";  // generation stages: the part its completion fills
};

enum class GenerateMode { kPropose, kSample };
enum class EvaluateMode { kValue, kVote, kPrm };

struct GenerateSpec {
  GenerateMode mode = GenerateMode::kSample;
  std::vector<PromptSpec> stages;      // propose: exactly one
  std::string thought = "{thought}";   // the thought's text, from its parts
};

struct ValueSpec {
  // The first label (case-insensitive, as a whole word) found in the
  // completion gives the value, e.g. sure/likely/impossible -> 20/1/0.001.
  std::vector<std::pair<std::string, double>> labels;
  // Or: a regex whose first group is a number in [min, max].
  std::string number;
  double min = 0;
  double max = 10;
  double unparsed = 0;  // the value of a completion that parses as neither
};

// A process reward model scores the state's steps (mode "prm"): it reads
// `prefix` and then each thought as `step` renders it, and the state's value
// is the aggregate of its step scores.
struct PrmSpec {
  std::string model;                  // the PRM's folder (task.json: relative to the task folder)
  std::string prefix;                 // a template over the data fields
  std::string step = "{thought}\n";  // a template over {thought} and {index} (1-based)
  StepAggregate aggregate = StepAggregate::kLast;  // search-and-learn's default
};

struct EvaluateSpec {
  EvaluateMode mode = EvaluateMode::kValue;
  PrmSpec prm;          // prm mode
  PromptSpec prompt;
  // value mode: the prompt a whole chain of thought (best-of-n) is scored
  // by, with `prompt`'s other settings; empty: `prompt` itself, where a
  // chain has every field it names (Task::check_scores_chains).
  std::string chain_prompt;
  int samples = 1;      // value: summed over samples; vote: votes cast
  ValueSpec value;
  std::string vote_pattern = "best choice is\\s*(\\d+)";  // group 1: the 1-based choice
  std::string choice = "Choice {index}:\n{thought}\n";    // one entry of {choices}
};

struct StateFieldSpec {
  std::string name;
  std::string initial;  // a template over the data fields
  std::string pattern;  // regex; group 1 of the latest matching thought
};

// Search parameters: task folders set defaults, `seed run` flags override.
struct SearchParams {
  int depth = 3;           // T: thought steps below the root (bfs, dvts, mcts)
  int n = 5;               // thoughts kept per expanded state
  int b = 5;               // bfs: states kept per level
  int samples = 8;         // best-of-n, self-consistency: chains sampled
  int beams = 16;          // dvts: N beams ...
  int beam_width = 4;      // ... in N / beam_width subtrees of this width
  int simulations = 32;    // mcts: leaf selections in all
  int parallel = 4;        // mcts: selections per round (virtual loss)
  double c_puct = 1.0;     // mcts: exploration constant
  std::string selection = "puct";  // mcts: uct | puct
  int rollout_depth = 0;   // mcts: greedy rollout steps below a new leaf
  // self-consistency: stop sampling once the chains left cannot change the
  // majority answer (the answer is the full vote's, for fewer tokens).
  bool early_stop = true;

  // Throws kInvalidArgument naming the parameter (prefixed by `where`).
  void validate(const std::string& where) const;
};

// Lookahead reasoning (`seed run --lookahead`): what ends a step, and when a
// drafted step counts as the target's: "exact", "normalized" (whitespace and
// number formatting ignored), a step checker (tasks/step_checkers.h),
// "hidden[:THRESHOLD]" (the target's hidden states alike), or "judge": a
// model answers `judge_prompt`, a template over {s1} (the target's step) and
// {s2} (the drafted step), and "yes" accepts.
struct LookaheadSpec {
  std::string delimiter = "\n";
  std::string verifier = "normalized";
  std::string judge_prompt;  // "" if the task has none
};

struct TaskSpec {
  std::string name;
  std::string description;
  DataSpec data;
  std::string examples;  // few-shot text ({examples}); "" if none
  std::vector<StateFieldSpec> state_fields;
  GenerateSpec generate;
  EvaluateSpec evaluate;
  std::optional<PromptSpec> answer;
  std::optional<PromptSpec> cot;
  std::string final_pattern;  // "" = none
  bool final_at_goal = false;
  SearchParams search;
  CheckerConfig checker;
  LookaheadSpec lookahead;
  // Set ("chat" in task.json): prompts are user turns of a chat after this
  // system turn ("" for none), for the engine to render (RunSettings).
  std::optional<std::string> chat_system;
  // chat.variables: the chat template's variables beside the turns (Qwen3's
  // {"enable_thinking": false}: replies without a thinking block).
  nlohmann::ordered_json chat_variables = nlohmann::ordered_json::object();
};

}  // namespace seed::tasks
