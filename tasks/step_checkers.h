// Step checkers: when two reasoning steps of a task mean the same, for
// lookahead reasoning's step verifier (spec/lookahead/step_verifier.h). Registered by
// name like the answer checkers; task.json names one
// ("lookahead": {"verifier": "game24"}).
//   game24       the steps leave the same numbers: their "(left: ...)"
//                lists are the same multiset (a step without one matches
//                only itself);
//   blocksworld  the steps are the same action (from one state, the same
//                resulting state), however they are phrased.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace seed::tasks {

using StepChecker = std::function<bool(std::string_view target_step, std::string_view draft_step)>;

const std::vector<std::string>& step_checker_names();

// Every step verifier a task.json ("lookahead": {"verifier": ...}) or
// --step-verifier may name, the one list: "exact" and "normalized"
// (spec/lookahead/step_verifier.h), "judge" (a model answers the task's
// judge_prompt), "hidden[:THRESHOLD]" (parse_hidden_verifier), then the
// step checkers.
const std::vector<std::string>& step_verifier_names();
// step_verifier_names() joined by " | ", for help text and errors.
std::string step_verifier_list();
// Throws kInvalidArgument naming `name` and the registered names.
StepChecker make_step_checker(const std::string& name);

// Whether `name` names the hidden-state verifier (spec/lookahead/hidden_state_verifier.h):
// "hidden", or "hidden:T" with its threshold T in [-1, 1], which goes to
// *threshold (nullopt for "hidden": the verifier's default). Throws
// kInvalidArgument naming `where` for a bad T.
bool parse_hidden_verifier(const std::string& name, const std::string& where, std::optional<double>* threshold);

}  // namespace seed::tasks
