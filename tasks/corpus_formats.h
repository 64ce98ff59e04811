// Every prompt template of the project's task formats, in one place.
//
// The training corpora (tasks/corpus.h) and the task folders that prompt
// the trained models (tasks/game24, tasks/blocksworld) must
// use the same text byte for byte, or the shipped models see prompts they
// were never trained on. So the templates live here, and a task.json that
// prompts the zoo models copies them verbatim.
//
// Fields are written {name} and filled by render_prompt (tasks/corpus.h).
// Every prompt ends with a newline; the completion starts on the next line.
// No few-shot examples: the zoo models have a 512-1024-token context.
//
// Game of 24 follows Tree of Thoughts (Yao et al., 2023) minus its few-shot
// examples. Blocksworld follows the SEED paper's appendix D (its action list,
// restrictions and [STATEMENT]/[ACTION]/[EVALUATION] markers; the omitted
// demonstrations stay omitted) with PlanBench's [PLAN] markers for whole
// plans.
#pragma once

#include <string>
#include <string_view>

namespace seed::tasks {

// --- Game of 24 ---------------------------------------------------------
// {input}: the current numbers, ascending, integers or p/q ("4 9 10 13").

// Thought generation ("propose"). Completion: up to 8 step lines
// "a op b = c (left: ...)", each ending in '\n'.
inline constexpr std::string_view kGame24ProposePrompt = "Input: {input}\nPossible next steps:\n";

// State evaluation ("value"). Completion: for two or three numbers the worked
// check's lines (game24_value_check in tasks/game24.h), then the label line
// "sure\n", "likely\n" or "impossible\n" (Game24Label). The check lines hold
// no label word, so the first label in the completion is the verdict.
inline constexpr std::string_view kGame24ValuePrompt =
    "Evaluate if given numbers can reach 24 (sure/likely/impossible)\n{input}\n";

// Chain of thought ("cot"). Completion: the step lines down to
// "(left: 24)", then "Answer: <expression> = 24\n". ToT-BFS's last step reuses
// it: prompt + the chosen step lines, and the model completes the Answer line.
inline constexpr std::string_view kGame24CotPrompt =
    "Use numbers and basic arithmetic operations (+ - * /) to obtain 24. Each step, you are only "
    "allowed to choose two of the remaining numbers to obtain a new number.\n"
    "Input: {input}\nSteps:\n";

inline constexpr std::string_view kGame24AnswerPrefix = "Answer: ";

// Process reward ("prm"): the puzzle, then each step (or the Answer line)
// followed by the step tag, the last without its newline. Completion: "+"
// (the numbers left can still make 24) or "-". tasks/game24-prm reads
// states in this format: prefix "Input: {input}\n", step "{thought} #\n".
inline constexpr std::string_view kGame24PrmPrefix = "Input: {input}\n";
inline constexpr std::string_view kGame24PrmTag = " #";

// --- Blocksworld ---------------------------------------------------------
// {statement}: blocks_statement(instance) ("As initial conditions I have
// that, ...\nMy goal is to have that ...."). {plan}: the actions taken so far,
// each followed by '\n' (empty at the start). {action}: one action line.

// The SEED paper's shared opening: the four actions and their restrictions.
inline constexpr std::string_view kBlocksworldPreamble =
    "I am playing with a set of blocks where I need to arrange the blocks into stacks. Here are "
    "the actions I can do:\n"
    "Pick up a block\n"
    "Unstack a block from on top of another block\n"
    "Put down a block\n"
    "Stack a block on top of another block\n"
    "I have the following restrictions on my actions:\n"
    "I can only pick up or unstack one block at a time.\n"
    "I can only pick up or unstack a block if my hand is empty.\n"
    "I can only pick up a block if the block is on the table and the block is clear. A block is "
    "clear if the block has no other blocks on top of it and if the block is not picked up.\n"
    "I can only unstack a block from on top of another block if the block I am unstacking was "
    "really on top of the other block.\n"
    "I can only unstack a block from on top of another block if the block I am unstacking is "
    "clear.\n"
    "Once I pick up or unstack a block, I am holding the block.\n"
    "I can only put down a block that I am holding.\n"
    "I can only stack a block on top of another block if I am holding the block being stacked.\n"
    "I can only stack a block on top of another block if the block onto which I am stacking the "
    "block is clear.\n"
    "Once I put down or stack a block, my hand becomes empty.\n";

// Thought generation ("next_action"). Completion: one action line + '\n'.
inline const std::string kBlocksworldNextActionPrompt =
    std::string(kBlocksworldPreamble) +
    "[STATEMENT]\n{statement}\nMy plan is as follows:\n{plan}The current action is:\n";

// State evaluation ("evaluate_action"): is the last action of the plan a good
// one? Completion: "good\n" or "bad\n".
inline const std::string kBlocksworldEvaluatePrompt =
    std::string(kBlocksworldPreamble) +
    "Please evaluate whether the given action is a good one under certain conditions.\n"
    "[STATEMENT]\n{statement}\n[ACTION]\n{plan}{action}\n[EVALUATION]\nThe evaluation is:\n";

// A whole plan ("plan"). Completion: the action lines, then "[PLAN END]\n".
inline const std::string kBlocksworldPlanPrompt =
    std::string(kBlocksworldPreamble) +
    "[STATEMENT]\n{statement}\nMy plan is as follows:\n[PLAN]\n";

inline constexpr std::string_view kBlocksworldPlanEnd = "[PLAN END]";

}  // namespace seed::tasks
