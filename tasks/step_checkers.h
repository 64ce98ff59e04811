// Step checkers: when two reasoning steps of a task mean the same, for
// lookahead reasoning's step verifier (spec/step_verifier.h). Registered by
// name like the answer checkers; task.json names one
// ("lookahead": {"verifier": "game24"}).
//   game24       the steps leave the same numbers: their "(left: ...)"
//                lists are the same multiset (a step without one matches
//                only itself);
//   blocksworld  the steps are the same action (from one state, the same
//                resulting state), however they are phrased.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace seed::tasks {

using StepChecker = std::function<bool(std::string_view target_step, std::string_view draft_step)>;

const std::vector<std::string>& step_checker_names();
// Throws kInvalidArgument naming `name` and the registered names.
StepChecker make_step_checker(const std::string& name);

}  // namespace seed::tasks
