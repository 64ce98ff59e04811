// Blocksworld: states, the four actions, optimal plans and a plan validator.
//
// Blocks stand in stacks on a table; one hand moves one block at a time. The
// actions and their restrictions are those of the SEED paper's appendix D
// (Wang et al. 2024, "SEED: Accelerating Reasoning Tree Construction via
// Scheduled Speculative Decoding"), which takes them
// from PlanBench (Valmeekam et al., 2023). Text is PlanBench's:
//
//   actions   "pick up the red block"
//             "unstack the red block from on top of the blue block"
//             "put down the red block"
//             "stack the red block on top of the blue block"
//   statement "As initial conditions I have that, the red block is clear, the
//              hand is empty, the red block is on top of the blue block and the
//              blue block is on the table.\nMy goal is to have that the blue
//              block is on top of the red block."
//
// A goal is a list of "X is on top of Y" facts, as in PlanBench; blocks it
// does not mention may be anywhere.
//
// Users: the corpus generator (tasks/corpus.h) and the blocksworld task's
// plan validator (tasks/checkers.h). Torch-free and deterministic; all functions are
// thread-safe (no shared state). Errors: blocks_apply throws seed::Error
// kInvalidArgument on a broken precondition; everything that reads model
// output (blocks_parse_action, blocks_parse_statement, blocks_validate_plan)
// never throws.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace seed::tasks {

// Block names of generated instances (PlanBench's colours); also the limit on
// the number of blocks.
inline constexpr std::array<std::string_view, 8> kBlockColors = {
    "red", "blue", "orange", "yellow", "white", "magenta", "black", "cyan"};
inline constexpr int kBlocksMax = static_cast<int>(kBlockColors.size());

inline constexpr int kOnTable = -1;  // BlocksState::below: on the table
inline constexpr int kInHand = -2;   // BlocksState::below: held by the hand

struct BlocksState {
  // below[i]: the block that block i stands on, kOnTable, or kInHand.
  // Invariant (blocks_state_error): no cycles, at most one block on each
  // block, at most one block in the hand, nothing on the held block.
  std::vector<int> below;

  int num_blocks() const { return static_cast<int>(below.size()); }
  int held() const;  // the block in the hand, or -1
  bool hand_empty() const { return held() < 0; }
  // Nothing stands on the block and it is not held (the paper's definition).
  // Requires 0 <= block < num_blocks().
  bool clear(int block) const;

  friend bool operator==(const BlocksState& a, const BlocksState& b) { return a.below == b.below; }
  friend bool operator!=(const BlocksState& a, const BlocksState& b) { return !(a == b); }
};

// Empty when `state` keeps the invariant (and has 1..kBlocksMax blocks), else
// which part breaks it.
std::string blocks_state_error(const BlocksState& state);

struct OnFact {
  int block = 0;
  int below = 0;  // "the <block> block is on top of the <below> block"
  friend bool operator==(const OnFact& a, const OnFact& b) {
    return a.block == b.block && a.below == b.below;
  }
};

struct BlocksInstance {
  std::vector<std::string> names;  // names[i] of block i, lowercase: "red" in "the red block"
  BlocksState start;               // the hand is empty at the start
  std::vector<OnFact> goal;
};

enum class BlocksActionKind { kPickUp, kUnstack, kPutDown, kStack };

struct BlocksAction {
  BlocksActionKind kind = BlocksActionKind::kPickUp;
  int block = 0;   // the block picked up, unstacked, put down or stacked
  int other = -1;  // kUnstack: the block it came off; kStack: its target; else -1

  friend bool operator==(const BlocksAction& a, const BlocksAction& b) {
    return a.kind == b.kind && a.block == b.block && a.other == b.other;
  }
};

// Legal actions from `state`, deterministic order: with an empty hand, for
// each clear block by index, pick it up or unstack it; holding a block, put
// it down, then stack it on each clear block by index.
std::vector<BlocksAction> blocks_valid_actions(const BlocksState& state);

// Empty when `action` is legal in `state`, else the restriction it breaks
// ("I can only pick up a block if my hand is empty").
std::string blocks_action_error(const BlocksState& state, const BlocksAction& action);

// The state after a legal action. Throws kInvalidArgument with
// blocks_action_error's reason when it is not legal.
BlocksState blocks_apply(const BlocksState& state, const BlocksAction& action);

bool blocks_goal_holds(const BlocksState& state, const std::vector<OnFact>& goal);

// A shortest plan: of all shortest plans, the first when actions are
// compared in blocks_valid_actions order (the plan a breadth-first search
// expanding actions in that order finds). Found by A* under a lower bound on
// the actions left, so 8 blocks take milliseconds, not a sweep of the whole
// state space. Empty when the goal already holds; nullopt when no state
// satisfies the goal (contradictory facts).
std::optional<std::vector<BlocksAction>> blocks_optimal_plan(const BlocksState& start,
                                                             const std::vector<OnFact>& goal);

// The valid actions from `state` that begin some optimal plan (each leaves a
// state one step closer to the goal). Empty if the goal holds or is unreachable.
std::vector<BlocksAction> blocks_optimal_actions(const BlocksState& state,
                                                 const std::vector<OnFact>& goal);

// A random instance of `num_blocks` (1..kBlocksMax) blocks: distinct colours
// drawn from kBlockColors, random start and goal stacks, and a goal that does
// not already hold. Deterministic given the engine's state (no
// implementation-defined std distributions are used). Throws kInvalidArgument
// for num_blocks < 2 or > kBlocksMax (one block has no non-trivial goal).
BlocksInstance blocks_random_instance(std::mt19937_64& rng, int num_blocks);

// --- Text (PlanBench wording) ----------------------------------------------

std::string blocks_action_text(const BlocksAction& action, const std::vector<std::string>& names);

// Reads one action line: case-insensitive, surrounding spaces and one final
// '.' ignored. nullopt when it is not one of the four phrasings over `names`.
std::optional<BlocksAction> blocks_parse_action(std::string_view line,
                                                const std::vector<std::string>& names);

// "the red block is clear, ..., the hand is empty, ... and the blue block is
// on the table": clear facts, the hand ("the hand is empty" or "I am holding
// the red block"), on-top facts, on-table facts, each group by block index.
std::string blocks_describe_state(const BlocksState& state, const std::vector<std::string>& names);

// "the red block is on top of the blue block and the blue block is on top of
// the yellow block".
std::string blocks_describe_goal(const std::vector<OnFact>& goal,
                                 const std::vector<std::string>& names);

// "As initial conditions I have that, <state>.\nMy goal is to have that <goal>."
std::string blocks_statement(const BlocksInstance& instance);

// Inverse of blocks_statement (names numbered by first appearance). nullopt
// when the text is not a statement of a consistent, hand-empty start state.
std::optional<BlocksInstance> blocks_parse_statement(std::string_view text);

enum class PlanVerdict {
  kReachesGoal,       // every action legal and the goal holds at the end
  kUnparsableAction,  // a line is not an action
  kIllegalAction,     // an action breaks a restriction in the state it meets
  kGoalNotReached,    // all actions legal, the goal does not hold at the end
};

struct PlanCheck {
  PlanVerdict verdict = PlanVerdict::kUnparsableAction;
  int failed_action = -1;  // 0-based index of the first bad action, else -1
  int num_actions = 0;     // actions read (up to and including a failing one)
  std::string reason;      // empty when the plan reaches the goal
  bool reaches_goal() const { return verdict == PlanVerdict::kReachesGoal; }
};

// The plan validator: simulates `plan_text` (one action per line; blank lines
// and "[PLAN]" ignored, reading stops at "[PLAN END]") from the instance's
// start. Stops at the first unparsable or illegal action. Never throws.
PlanCheck blocks_validate_plan(const BlocksInstance& instance, std::string_view plan_text);

}  // namespace seed::tasks
