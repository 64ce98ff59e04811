// Blocksworld: state invariants, the four actions, breadth-first planning and
// random instances. Text (PlanBench wording, parsing, the plan validator) is
// in blocksworld_text.cpp.
#include "tasks/blocksworld.h"

#include <deque>
#include <unordered_map>

#include "models/base/error.h"
#include "tasks/random_draw.h"

namespace seed::tasks {
namespace {

// A state as one integer for the BFS tables: 4 bits per block (below + 2).
uint64_t state_key(const BlocksState& state) {
  uint64_t key = 0;
  for (const int b : state.below) key = (key << 4) | static_cast<uint64_t>(b + 2);
  return key;
}

// Breadth-first distances from `start` to the goal; -1 when unreachable.
// Returns the path too when `plan` is not null.
int bfs(const BlocksState& start, const std::vector<OnFact>& goal,
        std::vector<BlocksAction>* plan) {
  struct Visit {
    uint64_t parent;
    BlocksAction action;
  };
  std::unordered_map<uint64_t, Visit> visited;
  std::deque<std::pair<BlocksState, int>> frontier;
  const uint64_t start_key = state_key(start);
  visited.emplace(start_key, Visit{start_key, BlocksAction{}});
  frontier.emplace_back(start, 0);
  while (!frontier.empty()) {
    auto [state, depth] = std::move(frontier.front());
    frontier.pop_front();
    if (blocks_goal_holds(state, goal)) {
      if (plan != nullptr) {
        plan->clear();
        for (uint64_t key = state_key(state); key != start_key;) {
          const Visit& v = visited.at(key);
          plan->insert(plan->begin(), v.action);
          key = v.parent;
        }
      }
      return depth;
    }
    const uint64_t key = state_key(state);
    for (const BlocksAction& action : blocks_valid_actions(state)) {
      BlocksState next = blocks_apply(state, action);
      if (visited.emplace(state_key(next), Visit{key, action}).second) {
        frontier.emplace_back(std::move(next), depth + 1);
      }
    }
  }
  return -1;
}

// Random stacks: blocks in random order, each one starting a new stack or
// going on top of the previous one with even odds.
BlocksState random_stacks(std::mt19937_64& rng, int num_blocks) {
  std::vector<int> order(static_cast<size_t>(num_blocks));
  for (int i = 0; i < num_blocks; ++i) order[static_cast<size_t>(i)] = i;
  draw_shuffle(rng, &order);
  BlocksState state;
  state.below.assign(static_cast<size_t>(num_blocks), kOnTable);
  for (size_t i = 1; i < order.size(); ++i) {
    if (draw_chance(rng, 1, 2)) state.below[static_cast<size_t>(order[i])] = order[i - 1];
  }
  return state;
}

}  // namespace

int BlocksState::held() const {
  for (int i = 0; i < num_blocks(); ++i) {
    if (below[static_cast<size_t>(i)] == kInHand) return i;
  }
  return -1;
}

bool BlocksState::clear(int block) const {
  if (below[static_cast<size_t>(block)] == kInHand) return false;
  for (const int b : below) {
    if (b == block) return false;
  }
  return true;
}

std::string blocks_state_error(const BlocksState& state) {
  const int n = state.num_blocks();
  if (n < 1 || n > kBlocksMax) {
    return std::to_string(n) + " blocks; expected 1.." + std::to_string(kBlocksMax);
  }
  int in_hand = 0;
  std::vector<int> supported(static_cast<size_t>(n), 0);
  for (int i = 0; i < n; ++i) {
    const int b = state.below[static_cast<size_t>(i)];
    if (!(b == kOnTable || b == kInHand || (b >= 0 && b < n && b != i))) {
      return "block " + std::to_string(i) + " stands on invalid position " + std::to_string(b);
    }
    if (b == kInHand) ++in_hand;
    if (b >= 0) {
      if (state.below[static_cast<size_t>(b)] == kInHand) {
        return "block " + std::to_string(i) + " stands on the held block " + std::to_string(b);
      }
      if (++supported[static_cast<size_t>(b)] > 1) {
        return "two blocks stand on block " + std::to_string(b);
      }
    }
    // Walking down from i must end on the table or in the hand within n steps.
    int cur = i;
    for (int steps = 0; cur >= 0; ++steps) {
      if (steps > n) return "blocks form a cycle through block " + std::to_string(i);
      cur = state.below[static_cast<size_t>(cur)];
    }
  }
  if (in_hand > 1) return std::to_string(in_hand) + " blocks in the hand; at most one";
  return "";
}

void blocks_validate_state(const BlocksState& state) {
  const std::string error = blocks_state_error(state);
  SEED_CHECK(error.empty(), kInvalidArgument) << "Blocksworld state: " << error;
}

std::vector<BlocksAction> blocks_valid_actions(const BlocksState& state) {
  std::vector<BlocksAction> actions;
  const int held = state.held();
  if (held < 0) {
    for (int b = 0; b < state.num_blocks(); ++b) {
      if (!state.clear(b)) continue;
      const int under = state.below[static_cast<size_t>(b)];
      if (under == kOnTable) {
        actions.push_back({BlocksActionKind::kPickUp, b, -1});
      } else {
        actions.push_back({BlocksActionKind::kUnstack, b, under});
      }
    }
    return actions;
  }
  actions.push_back({BlocksActionKind::kPutDown, held, -1});
  for (int b = 0; b < state.num_blocks(); ++b) {
    if (state.clear(b)) actions.push_back({BlocksActionKind::kStack, held, b});
  }
  return actions;
}

std::string blocks_action_error(const BlocksState& state, const BlocksAction& action) {
  const int n = state.num_blocks();
  const auto in_range = [n](int b) { return b >= 0 && b < n; };
  if (!in_range(action.block)) return "there is no such block";
  const int under = state.below[static_cast<size_t>(action.block)];
  switch (action.kind) {
    case BlocksActionKind::kPickUp:
      if (!state.hand_empty()) return "I can only pick up or unstack a block if my hand is empty";
      if (under != kOnTable || !state.clear(action.block)) {
        return "I can only pick up a block if the block is on the table and the block is clear";
      }
      return "";
    case BlocksActionKind::kUnstack:
      if (!in_range(action.other)) return "there is no such block";
      if (!state.hand_empty()) return "I can only pick up or unstack a block if my hand is empty";
      if (under != action.other) {
        return "I can only unstack a block from on top of another block if the block I am "
               "unstacking was really on top of the other block";
      }
      if (!state.clear(action.block)) {
        return "I can only unstack a block from on top of another block if the block I am "
               "unstacking is clear";
      }
      return "";
    case BlocksActionKind::kPutDown:
      if (under != kInHand) return "I can only put down a block that I am holding";
      return "";
    case BlocksActionKind::kStack:
      if (!in_range(action.other) || action.other == action.block) return "there is no such block";
      if (under != kInHand) {
        return "I can only stack a block on top of another block if I am holding the block "
               "being stacked";
      }
      if (!state.clear(action.other)) {
        return "I can only stack a block on top of another block if the block onto which I am "
               "stacking the block is clear";
      }
      return "";
  }
  return "unknown action";  // unreachable
}

BlocksState blocks_apply(const BlocksState& state, const BlocksAction& action) {
  const std::string error = blocks_action_error(state, action);
  SEED_CHECK(error.empty(), kInvalidArgument) << "Blocksworld: illegal action: " << error;
  BlocksState next = state;
  int& position = next.below[static_cast<size_t>(action.block)];
  switch (action.kind) {
    case BlocksActionKind::kPickUp:
    case BlocksActionKind::kUnstack:
      position = kInHand;
      break;
    case BlocksActionKind::kPutDown:
      position = kOnTable;
      break;
    case BlocksActionKind::kStack:
      position = action.other;
      break;
  }
  return next;
}

bool blocks_goal_holds(const BlocksState& state, const std::vector<OnFact>& goal) {
  for (const OnFact& fact : goal) {
    if (fact.block < 0 || fact.block >= state.num_blocks()) return false;
    if (state.below[static_cast<size_t>(fact.block)] != fact.below) return false;
  }
  return true;
}

std::optional<std::vector<BlocksAction>> blocks_optimal_plan(const BlocksState& start,
                                                             const std::vector<OnFact>& goal) {
  std::vector<BlocksAction> plan;
  if (bfs(start, goal, &plan) < 0) return std::nullopt;
  return plan;
}

std::vector<BlocksAction> blocks_optimal_actions(const BlocksState& state,
                                                 const std::vector<OnFact>& goal) {
  std::vector<BlocksAction> optimal;
  const int distance = bfs(state, goal, nullptr);
  if (distance <= 0) return optimal;
  for (const BlocksAction& action : blocks_valid_actions(state)) {
    if (bfs(blocks_apply(state, action), goal, nullptr) == distance - 1) optimal.push_back(action);
  }
  return optimal;
}

BlocksInstance blocks_random_instance(std::mt19937_64& rng, int num_blocks) {
  SEED_CHECK(num_blocks >= 2 && num_blocks <= kBlocksMax, kInvalidArgument)
      << "blocks_random_instance: " << num_blocks << " blocks; expected 2.." << kBlocksMax;
  BlocksInstance instance;
  std::vector<size_t> colours(kBlockColors.size());
  for (size_t i = 0; i < colours.size(); ++i) colours[i] = i;
  draw_shuffle(rng, &colours);
  for (int i = 0; i < num_blocks; ++i) {
    instance.names.emplace_back(kBlockColors[colours[static_cast<size_t>(i)]]);
  }
  instance.start = random_stacks(rng, num_blocks);
  // A goal with no on-top fact, or one that already holds, is no puzzle:
  // redraw. With two or more blocks a fresh draw succeeds with odds >= 1/4.
  for (;;) {
    const BlocksState goal_state = random_stacks(rng, num_blocks);
    instance.goal.clear();
    for (int b = 0; b < num_blocks; ++b) {
      const int under = goal_state.below[static_cast<size_t>(b)];
      if (under >= 0) instance.goal.push_back({b, under});
    }
    if (!instance.goal.empty() && !blocks_goal_holds(instance.start, instance.goal)) break;
  }
  return instance;
}

}  // namespace seed::tasks
