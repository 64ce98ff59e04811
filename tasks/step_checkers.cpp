#include "tasks/step_checkers.h"

#include <optional>

#include "models/base/error.h"
#include "tasks/blocksworld.h"
#include "tasks/game24.h"

namespace seed::tasks {
namespace {

// The canonical text of a step's "(left: ...)" numbers.
std::optional<std::string> numbers_left(std::string_view step) {
  const size_t open = step.find("(left:");
  if (open == std::string_view::npos) return std::nullopt;
  const size_t close = step.find(')', open);
  if (close == std::string_view::npos) return std::nullopt;
  const std::optional<Numbers> left = parse_numbers(step.substr(open + 6, close - open - 6));
  if (!left) return std::nullopt;
  return numbers_text(*left);
}

bool same_numbers_left(std::string_view a, std::string_view b) {
  const std::optional<std::string> left_a = numbers_left(a), left_b = numbers_left(b);
  if (!left_a || !left_b) return a == b;
  return *left_a == *left_b;
}

bool same_action(std::string_view a, std::string_view b) {
  static const std::vector<std::string> names(kBlockColors.begin(), kBlockColors.end());
  const std::optional<BlocksAction> action_a = blocks_parse_action(a, names);
  const std::optional<BlocksAction> action_b = blocks_parse_action(b, names);
  if (!action_a || !action_b) return a == b;
  return blocks_action_text(*action_a, names) == blocks_action_text(*action_b, names);
}

}  // namespace

const std::vector<std::string>& step_checker_names() {
  static const std::vector<std::string> names = {"game24", "blocksworld"};
  return names;
}

const std::vector<std::string>& step_verifier_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> all = {"exact", "normalized", "judge", "hidden[:THRESHOLD]"};
    all.insert(all.end(), step_checker_names().begin(), step_checker_names().end());
    return all;
  }();
  return names;
}

std::string step_verifier_list() {
  std::string list;
  for (const std::string& name : step_verifier_names()) list += (list.empty() ? "" : " | ") + name;
  return list;
}

StepChecker make_step_checker(const std::string& name) {
  if (name == "game24") return same_numbers_left;
  if (name == "blocksworld") return same_action;
  SEED_FAIL(kInvalidArgument) << "step checker '" << name << "': use game24 | blocksworld";
}

bool parse_hidden_verifier(const std::string& name, const std::string& where, std::optional<double>* threshold) {
  const std::string prefix = "hidden";
  if (name.compare(0, prefix.size(), prefix) != 0) return false;
  if (name == prefix) {
    *threshold = std::nullopt;
    return true;
  }
  if (name[prefix.size()] != ':') return false;
  const std::string value = name.substr(prefix.size() + 1);
  size_t end = 0;
  double t = 0;
  try {
    t = std::stod(value, &end);
  } catch (const std::exception&) {
    end = 0;
  }
  SEED_CHECK(end == value.size() && end > 0 && t >= -1 && t <= 1, kInvalidArgument)
      << where << ": '" << name << "': the hidden-state verifier's threshold must be a number in [-1, 1]";
  *threshold = t;
  return true;
}

}  // namespace seed::tasks
