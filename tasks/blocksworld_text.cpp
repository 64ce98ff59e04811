// Blocksworld text: PlanBench's wording of actions and states, its parsing,
// and the plan validator. Parsing reads model output, so nothing here throws.
#include <algorithm>
#include <cctype>
#include <string>

#include "models/base/trim.h"
#include "tasks/blocksworld.h"

namespace seed::tasks {
namespace {

std::string lower_trimmed(std::string_view text) {
  std::string out(trim(text));
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool consume(std::string_view* text, std::string_view prefix) {
  if (text->substr(0, prefix.size()) != prefix) return false;
  text->remove_prefix(prefix.size());
  return true;
}

// Consumes "the <name> block" for one of `names`; returns its index or -1.
int consume_block(std::string_view* text, const std::vector<std::string>& names) {
  std::string_view rest = *text;
  if (!consume(&rest, "the ")) return -1;
  for (size_t i = 0; i < names.size(); ++i) {
    std::string_view candidate = rest;
    if (consume(&candidate, names[i]) && consume(&candidate, " block")) {
      *text = candidate;
      return static_cast<int>(i);
    }
  }
  return -1;
}

std::string block(const std::vector<std::string>& names, int b) {
  return "the " + names[static_cast<size_t>(b)] + " block";
}

// "a, b, c and d" (PlanBench's list style).
std::string join_facts(const std::vector<std::string>& facts) {
  std::string out;
  for (size_t i = 0; i < facts.size(); ++i) {
    if (i > 0) out += i + 1 == facts.size() ? " and " : ", ";
    out += facts[i];
  }
  return out;
}

// Splits "a, b, c and d" back into facts.
std::vector<std::string_view> split_facts(std::string_view text) {
  std::vector<std::string_view> facts;
  while (!text.empty()) {
    const size_t comma = text.find(", ");
    const size_t conj = text.find(" and ");
    const size_t cut = std::min(comma, conj);
    facts.push_back(text.substr(0, cut));
    if (cut == std::string_view::npos) break;
    text.remove_prefix(cut + (cut == comma ? 2 : 5));
  }
  return facts;
}

// Index of `name` in `names`, appending it when new.
int intern(std::vector<std::string>* names, std::string_view name) {
  for (size_t i = 0; i < names->size(); ++i) {
    if ((*names)[i] == name) return static_cast<int>(i);
  }
  names->emplace_back(name);
  return static_cast<int>(names->size()) - 1;
}

// Reads "the <name> block" with a name not known yet; "" on failure.
std::string_view consume_new_block(std::string_view* text) {
  std::string_view rest = *text;
  if (!consume(&rest, "the ")) return {};
  const size_t end = rest.find(" block");
  if (end == 0 || end == std::string_view::npos) return {};
  const std::string_view name = rest.substr(0, end);
  *text = rest.substr(end + 6);
  return name;
}

constexpr std::string_view kInitialPrefix = "as initial conditions i have that, ";
constexpr std::string_view kGoalPrefix = "my goal is to have that ";

std::string_view strip_period(std::string_view text) {
  while (!text.empty() && (text.back() == '.' || std::isspace(static_cast<unsigned char>(text.back())))) {
    text.remove_suffix(1);
  }
  return text;
}

}  // namespace

std::string blocks_action_text(const BlocksAction& action, const std::vector<std::string>& names) {
  switch (action.kind) {
    case BlocksActionKind::kPickUp:
      return "pick up " + block(names, action.block);
    case BlocksActionKind::kUnstack:
      return "unstack " + block(names, action.block) + " from on top of " + block(names, action.other);
    case BlocksActionKind::kPutDown:
      return "put down " + block(names, action.block);
    case BlocksActionKind::kStack:
      return "stack " + block(names, action.block) + " on top of " + block(names, action.other);
  }
  return "";  // unreachable
}

std::optional<BlocksAction> blocks_parse_action(std::string_view line,
                                                const std::vector<std::string>& names) {
  std::string lowered = lower_trimmed(line);
  if (!lowered.empty() && lowered.back() == '.') lowered.pop_back();
  std::string_view text = lowered;
  BlocksAction action;
  if (consume(&text, "pick up ")) {
    action.kind = BlocksActionKind::kPickUp;
  } else if (consume(&text, "unstack ")) {
    action.kind = BlocksActionKind::kUnstack;
  } else if (consume(&text, "put down ")) {
    action.kind = BlocksActionKind::kPutDown;
  } else if (consume(&text, "stack ")) {
    action.kind = BlocksActionKind::kStack;
  } else {
    return std::nullopt;
  }
  action.block = consume_block(&text, names);
  if (action.block < 0) return std::nullopt;
  if (action.kind == BlocksActionKind::kUnstack || action.kind == BlocksActionKind::kStack) {
    const std::string_view link =
        action.kind == BlocksActionKind::kUnstack ? " from on top of " : " on top of ";
    if (!consume(&text, link)) return std::nullopt;
    action.other = consume_block(&text, names);
    if (action.other < 0) return std::nullopt;
  }
  if (!text.empty()) return std::nullopt;
  return action;
}

std::string blocks_describe_state(const BlocksState& state, const std::vector<std::string>& names) {
  std::vector<std::string> facts;
  for (int b = 0; b < state.num_blocks(); ++b) {
    if (state.clear(b)) facts.push_back(block(names, b) + " is clear");
  }
  const int held = state.held();
  facts.push_back(held < 0 ? "the hand is empty" : "I am holding " + block(names, held));
  for (int b = 0; b < state.num_blocks(); ++b) {
    const int under = state.below[static_cast<size_t>(b)];
    if (under >= 0) facts.push_back(block(names, b) + " is on top of " + block(names, under));
  }
  for (int b = 0; b < state.num_blocks(); ++b) {
    if (state.below[static_cast<size_t>(b)] == kOnTable) {
      facts.push_back(block(names, b) + " is on the table");
    }
  }
  return join_facts(facts);
}

std::string blocks_describe_goal(const std::vector<OnFact>& goal,
                                 const std::vector<std::string>& names) {
  std::vector<std::string> facts;
  for (const OnFact& fact : goal) {
    facts.push_back(block(names, fact.block) + " is on top of " + block(names, fact.below));
  }
  return join_facts(facts);
}

std::string blocks_statement(const BlocksInstance& instance) {
  return "As initial conditions I have that, " +
         blocks_describe_state(instance.start, instance.names) + ".\nMy goal is to have that " +
         blocks_describe_goal(instance.goal, instance.names) + ".";
}

std::optional<BlocksInstance> blocks_parse_statement(std::string_view text) {
  const std::string lowered = lower_trimmed(text);
  std::string_view rest = lowered;
  if (!consume(&rest, kInitialPrefix)) return std::nullopt;
  const size_t goal_at = rest.find(kGoalPrefix);
  if (goal_at == std::string_view::npos) return std::nullopt;
  const std::string_view initial = strip_period(rest.substr(0, goal_at));
  const std::string_view goal = strip_period(rest.substr(goal_at + kGoalPrefix.size()));

  BlocksInstance instance;
  constexpr int kUnknown = -3;
  std::vector<int> below;
  std::vector<int> said_clear;
  bool hand_empty = false;
  for (std::string_view fact : split_facts(initial)) {
    if (fact == "the hand is empty") {
      hand_empty = true;
      continue;
    }
    const std::string_view name = consume_new_block(&fact);
    if (name.empty()) return std::nullopt;
    const int b = intern(&instance.names, name);
    below.resize(instance.names.size(), kUnknown);
    int position = kUnknown;
    if (fact == " is clear") {
      said_clear.push_back(b);
      continue;
    }
    if (fact == " is on the table") {
      position = kOnTable;
    } else if (consume(&fact, " is on top of ")) {
      const std::string_view under = consume_new_block(&fact);
      if (under.empty() || !fact.empty()) return std::nullopt;
      position = intern(&instance.names, under);
      below.resize(instance.names.size(), kUnknown);
    } else {
      return std::nullopt;
    }
    if (below[static_cast<size_t>(b)] != kUnknown) return std::nullopt;  // placed twice
    below[static_cast<size_t>(b)] = position;
  }
  for (const int b : below) {
    if (b == kUnknown) return std::nullopt;  // a block with no position
  }
  instance.start.below = below;
  if (!hand_empty || !blocks_state_error(instance.start).empty()) return std::nullopt;
  // The clear facts must be exactly the clear blocks.
  std::vector<bool> clear(below.size(), false);
  for (const int b : said_clear) clear[static_cast<size_t>(b)] = true;
  for (int b = 0; b < instance.start.num_blocks(); ++b) {
    if (clear[static_cast<size_t>(b)] != instance.start.clear(b)) return std::nullopt;
  }
  for (std::string_view fact : split_facts(goal)) {
    const int b = consume_block(&fact, instance.names);
    if (b < 0 || !consume(&fact, " is on top of ")) return std::nullopt;
    const int under = consume_block(&fact, instance.names);
    if (under < 0 || !fact.empty()) return std::nullopt;
    instance.goal.push_back({b, under});
  }
  if (instance.goal.empty()) return std::nullopt;
  return instance;
}

PlanCheck blocks_validate_plan(const BlocksInstance& instance, std::string_view plan_text) {
  PlanCheck check;
  BlocksState state = instance.start;
  while (!plan_text.empty()) {
    const size_t end = plan_text.find('\n');
    const std::string line = lower_trimmed(plan_text.substr(0, end));
    plan_text = end == std::string_view::npos ? std::string_view() : plan_text.substr(end + 1);
    if (line.empty() || line == "[plan]") continue;
    if (line == "[plan end]") break;
    const int index = check.num_actions++;
    const std::optional<BlocksAction> action = blocks_parse_action(line, instance.names);
    if (!action) {
      check.verdict = PlanVerdict::kUnparsableAction;
      check.failed_action = index;
      check.reason = "action " + std::to_string(index + 1) + " '" + line + "' is not an action";
      return check;
    }
    const std::string error = blocks_action_error(state, *action);
    if (!error.empty()) {
      check.verdict = PlanVerdict::kIllegalAction;
      check.failed_action = index;
      check.reason = "action " + std::to_string(index + 1) + " '" + line + "': " + error;
      return check;
    }
    state = blocks_apply(state, *action);
  }
  if (!blocks_goal_holds(state, instance.goal)) {
    check.verdict = PlanVerdict::kGoalNotReached;
    check.reason = "the goal does not hold at the end: " + blocks_describe_state(state, instance.names);
    return check;
  }
  check.verdict = PlanVerdict::kReachesGoal;
  return check;
}

}  // namespace seed::tasks
