// Task: a task folder (task.json + data + optional few-shot examples) loaded
// and validated, and everything the search layer asks of it: prompts filled
// for a state, thoughts split from completions, values parsed, whether a
// state is final, and the checker's verdict on an answer.
//
// task.json (TaskSpec, tasks/task_spec.h; tasks/README.md documents every field):
//
//   name, description
//   data        where problems come from (DataSpec, tasks/task_data.h); a
//               relative path is looked up in the task folder, then in
//               TaskLoadOptions::data_dir (tasks/task_data_path.h)
//   examples    optional file of few-shot text, available as {examples}
//   state       fields derived from a state's thoughts: {"current":
//               {"initial": "{input}", "pattern": "\\(left: ([^)]*)\\)"}} is
//               the first group of the latest thought that matches, else the
//               initial template filled with the problem's data fields
//   generate    thought generation: mode "propose" (one completion, one
//               thought per non-empty line) or "sample" (one thought per
//               completion), one or more stages (each a prompt whose
//               completion fills a named part of the thought), and the
//               thought's text from its parts
//   evaluate    state evaluation: mode "value" (labels -> numbers, or a
//               number by regex; summed over samples), "vote" (the
//               candidates listed as {choices}; the completion names the
//               best; votes counted over samples) or "prm" (a process reward
//               model scores each step; PrmSpec)
//   answer      optional prompt that writes the final answer from the best
//               leaf (Algorithm 2, line 8); without it the answer is the
//               leaf's steps
//   cot         the chain-of-thought prompt (baselines cot, best-of-n,
//               self-consistency)
//   final       a thought matching "pattern" ends its path; "goal": true also
//               ends it when the checker's environment says the goal holds
//   search      defaults of the search parameters (SearchParams)
//   checker     the name of a registered checker and its options (checkers.h)
//   chat        true, or {"system": "..."}: every prompt is sent to a chat
//               model as a user turn (after that system turn), rendered by
//               the target's chat template where the text is tokenized
//
// Template fields: the problem's data fields; {steps} (every thought of the
// state, each followed by "\n"), {prior_steps} (all but the last), {thought}
// (the last; "" at the root), {depth}, the state fields, the parts of the
// last thought (by stage output name), {examples}; vote prompts add
// {choices}. Loading rejects a template that names anything else.
//
// A loaded Task is immutable and thread-safe.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tasks/checkers.h"
#include "tasks/task_data.h"
#include "tasks/task_spec.h"

namespace seed::tasks {

struct Thought {
  std::string text;
  std::map<std::string, std::string> parts;  // stage output -> its completion
};

// A reasoning state: the thoughts from the root.
struct State {
  std::vector<Thought> thoughts;
  std::optional<std::string> chain;  // a whole chain of thought's text (Task::state_from_text)
};

struct TaskLoadOptions {
  std::string data_path;  // replaces data.path, relative to the working directory ("" = task.json's)
  std::string data_dir;   // a folder of data sets (SEED_DATA_DIR) for a relative data.path ("" = none)
};

class Task {
 public:
  // Loads `folder`/task.json and its data (found as tasks/task_data_path.h
  // says). Throws seed::Error naming the file and the field: kNotFound (no
  // task.json, no data or examples file; the message says where it looked),
  // kCorruption (invalid JSON), kInvalidArgument (unknown field, wrong type,
  // a template naming an unknown field, a bad regex, an unknown checker, a
  // data row lacking a field a template or the checker needs).
  static Task load(const std::string& folder, const TaskLoadOptions& options = {});

  const TaskSpec& spec() const { return spec_; }
  const std::string& folder() const { return folder_; }
  const std::vector<Problem>& problems() const { return problems_; }
  const Checker& checker() const { return *checker_; }

  // --- thought generation
  // Stage `stage`'s prompt; `partial` holds the parts of earlier stages.
  std::string generation_prompt(size_t stage, const Problem& problem, const State& state,
                                const Thought& partial) const;
  // Propose mode: the thoughts of one completion (non-empty trimmed lines).
  std::vector<Thought> split_proposals(std::string_view completion) const;
  // Sample mode: `partial` with stage `stage`'s completion (trimmed) added;
  // after the last stage its text is set from the parts.
  Thought add_stage(Thought partial, size_t stage, std::string_view completion) const;

  // --- state evaluation
  // evaluate.prompt over `state`; evaluate.chain_prompt where it is a chain.
  std::string evaluation_prompt(const Problem& problem, const State& state) const;
  // Throws kInvalidArgument, naming the field, where the evaluator cannot
  // score a whole chain of thought: a value prompt naming a part of a
  // generated thought that a chain lacks, with no evaluate.chain_prompt.
  // `search`: who scores chains, for the message.
  void check_scores_chains(const std::string& search) const;
  std::optional<double> parse_value(std::string_view completion) const;
  double max_value() const;  // the largest value one sample can give
  // prm mode: the text before the first step, and each thought as a step.
  std::string prm_prefix(const Problem& problem) const;
  std::vector<std::string> prm_steps(const State& state) const;
  std::string vote_prompt(const Problem& problem, const State& parent,
                          const std::vector<const Thought*>& candidates) const;
  // The 1-based choice converted to 0-based; nullopt if none in [0, count).
  std::optional<size_t> parse_vote(std::string_view completion, size_t count) const;

  // --- ends and answers
  bool is_final(const Problem& problem, const State& state) const;
  std::string steps_text(const State& state) const;  // {steps}
  std::string answer_prompt(const Problem& problem, const State& state) const;  // requires spec().answer
  std::string cot_prompt(const Problem& problem) const;                         // requires spec().cot
  // A chain of thought as a state (one thought per non-empty line, each the
  // first generation stage's output; {chain} its whole text), so the
  // evaluator can score it.
  State state_from_text(std::string_view text) const;

 private:
  Task() = default;
  std::optional<std::string> lookup(const std::string& name, const Problem& problem, const State& state,
                                    const Thought* parts) const;
  std::string fill(const std::string& tmpl, const std::string& where, const Problem& problem,
                   const State& state, const Thought* parts) const;

  std::string folder_;
  std::string source_;  // folder/task.json, for messages
  TaskSpec spec_;
  std::vector<Problem> problems_;
  std::shared_ptr<const Checker> checker_;
  std::string chains_unscorable_;  // why the evaluator cannot score a chain ("" where it can)
};

}  // namespace seed::tasks
