// Blocksworld: state invariants, the four actions, optimal planning (A*) and
// random instances. Text (PlanBench wording, parsing, the plan validator) is
// in blocksworld_text.cpp.
#include "tasks/blocksworld.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <queue>
#include <unordered_map>

#include "models/base/error.h"
#include "tasks/random_draw.h"

namespace seed::tasks {
namespace {

// A state as one integer for the search tables: 4 bits per block (below + 2).
uint64_t state_key(const BlocksState& state) {
  uint64_t key = 0;
  for (const int b : state.below) key = (key << 4) | static_cast<uint64_t>(b + 2);
  return key;
}

BlocksState state_of_key(uint64_t key, int num_blocks) {
  BlocksState state;
  state.below.resize(static_cast<size_t>(num_blocks));
  for (int i = num_blocks - 1; i >= 0; --i, key >>= 4) {
    state.below[static_cast<size_t>(i)] = static_cast<int>(key & 0xF) - 2;
  }
  return state;
}

constexpr int kNoWish = -3;  // GoalIndex: the goal says nothing
constexpr int kNoLimit = INT_MAX;

// The goal as two lookups: where each block must stand, and which block must
// stand on each block.
struct GoalIndex {
  std::vector<int> below;  // below[b]: where b must stand, or kNoWish
  std::vector<int> above;  // above[c]: the block that must stand on c, or kNoWish
};

// The goal's index when some state satisfies it, else nullopt: every fact
// names blocks of the state, no block is wanted in two places, no two blocks
// on one block or in the hand, nothing on a held block, no cycle. Any goal
// that passes can be reached from any state (put every block down, then
// build the wanted stacks), so the search never has to prove unreachability
// by exhausting the state space.
std::optional<GoalIndex> index_goal(int num_blocks, const std::vector<OnFact>& goal) {
  const auto is_block = [num_blocks](int b) { return b >= 0 && b < num_blocks; };
  GoalIndex index{std::vector<int>(static_cast<size_t>(num_blocks), kNoWish),
                  std::vector<int>(static_cast<size_t>(num_blocks), kNoWish)};
  int in_hand = kNoWish;
  for (const OnFact& fact : goal) {
    if (!is_block(fact.block) || fact.block == fact.below) return std::nullopt;
    if (!is_block(fact.below) && fact.below != kOnTable && fact.below != kInHand) return std::nullopt;
    int& wish = index.below[static_cast<size_t>(fact.block)];
    if (wish != kNoWish && wish != fact.below) return std::nullopt;
    wish = fact.below;
    if (fact.below == kInHand) {
      if (in_hand != kNoWish && in_hand != fact.block) return std::nullopt;
      in_hand = fact.block;
    } else if (fact.below >= 0) {
      int& on = index.above[static_cast<size_t>(fact.below)];
      if (on != kNoWish && on != fact.block) return std::nullopt;
      on = fact.block;
    }
  }
  if (in_hand != kNoWish && index.above[static_cast<size_t>(in_hand)] != kNoWish) return std::nullopt;
  for (int b = 0; b < num_blocks; ++b) {
    int cur = b;
    for (int steps = 0; cur >= 0; ++steps) {
      if (steps > num_blocks) return std::nullopt;  // a cycle of wishes
      cur = index.below[static_cast<size_t>(cur)];
    }
  }
  return index;
}

// Whether block b (not held) must be picked up before the goal can hold: it
// stands somewhere the goal forbids, or on a block that must move, or on a
// block the goal reserves for another.
bool must_move(const BlocksState& state, const GoalIndex& goal, int b, std::vector<int8_t>* memo) {
  int8_t& known = (*memo)[static_cast<size_t>(b)];
  if (known >= 0) return known == 1;
  const int under = state.below[static_cast<size_t>(b)];
  const int wish = goal.below[static_cast<size_t>(b)];
  bool must = wish != kNoWish && wish != under;
  if (!must && under >= 0) {
    const int reserved = goal.above[static_cast<size_t>(under)];
    must = (reserved != kNoWish && reserved != b) || must_move(state, goal, under, memo);
  }
  known = must ? 1 : 0;
  return must;
}

// A lower bound on the actions left, consistent (one action lowers it by at
// most one), so A* expands each state once. Each of the m blocks that must
// move needs a pick-up and, unless it ends in the hand, a put-down or stack;
// a held block needs a put-down or stack unless it ends in the hand; at most
// one block ends in the hand: 2m + held - 1.
int actions_left_bound(const BlocksState& state, const GoalIndex& goal,
                       const std::vector<OnFact>& facts) {
  std::vector<int8_t> memo(state.below.size(), -1);
  int bound = -1;
  for (int b = 0; b < state.num_blocks(); ++b) {
    if (state.below[static_cast<size_t>(b)] == kInHand) {
      bound += 1;
    } else if (must_move(state, goal, b, &memo)) {
      bound += 2;
    }
  }
  return std::max(bound, blocks_goal_holds(state, facts) ? 0 : 1);
}

// The length of a shortest plan from `start` by A*, or -1 when it is longer
// than `limit`.
int distance_within(const BlocksState& start, const GoalIndex& goal,
                    const std::vector<OnFact>& facts, int limit) {
  struct Open {
    int f;
    int g;
    uint64_t key;
    // Lowest f first; among equals the deepest, which is nearest the goal.
    bool operator<(const Open& other) const {
      return f != other.f ? f > other.f : g < other.g;
    }
  };
  const int n = start.num_blocks();
  std::priority_queue<Open> open;
  std::unordered_map<uint64_t, int> best_g;
  const int h0 = actions_left_bound(start, goal, facts);
  if (h0 > limit) return -1;
  open.push({h0, 0, state_key(start)});
  best_g.emplace(state_key(start), 0);
  while (!open.empty()) {
    const Open node = open.top();
    open.pop();
    if (best_g.at(node.key) < node.g) continue;  // a shorter path was queued since
    const BlocksState state = state_of_key(node.key, n);
    if (blocks_goal_holds(state, facts)) return node.g;
    for (const BlocksAction& action : blocks_valid_actions(state)) {
      const BlocksState next = blocks_apply(state, action);
      const int g = node.g + 1;
      const int f = g + actions_left_bound(next, goal, facts);
      if (f > limit) continue;
      const auto [it, fresh] = best_g.emplace(state_key(next), g);
      if (!fresh) {
        if (it->second <= g) continue;
        it->second = g;
      }
      open.push({f, g, it->first});
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
  const std::optional<GoalIndex> index = index_goal(start.num_blocks(), goal);
  if (!index) return std::nullopt;
  // Walking down from the start, the first action (in blocks_valid_actions
  // order) that keeps a shortest plan possible gives the lexicographically
  // first shortest plan: the one a breadth-first search expanding actions in
  // that order finds.
  std::vector<BlocksAction> plan;
  BlocksState state = start;
  for (int left = distance_within(start, *index, goal, kNoLimit); left > 0; --left) {
    for (const BlocksAction& action : blocks_valid_actions(state)) {
      BlocksState next = blocks_apply(state, action);
      if (distance_within(next, *index, goal, left - 1) >= 0) {
        plan.push_back(action);
        state = std::move(next);
        break;
      }
    }
  }
  return plan;
}

std::vector<BlocksAction> blocks_optimal_actions(const BlocksState& state,
                                                 const std::vector<OnFact>& goal) {
  std::vector<BlocksAction> optimal;
  const std::optional<GoalIndex> index = index_goal(state.num_blocks(), goal);
  if (!index) return optimal;
  const int distance = distance_within(state, *index, goal, kNoLimit);
  if (distance <= 0) return optimal;
  for (const BlocksAction& action : blocks_valid_actions(state)) {
    if (distance_within(blocks_apply(state, action), *index, goal, distance - 1) >= 0) {
      optimal.push_back(action);
    }
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
