// Game of 24: the worked value check that the value prompt's completion
// writes before its label (see game24_value_check in tasks/game24.h).
#include <algorithm>
#include <vector>

#include "tasks/game24.h"

namespace seed::tasks {
namespace {

void append_distinct(std::vector<Rational>* values, const RationalResult& r) {
  if (r.ok() && std::find(values->begin(), values->end(), r.value) == values->end()) {
    values->push_back(r.value);
  }
}

// What the pair lo <= hi can make, in game24_next_steps order.
std::vector<Rational> pair_results(const Rational& lo, const Rational& hi) {
  std::vector<Rational> made;
  append_distinct(&made, add(lo, hi));
  append_distinct(&made, sub(hi, lo));
  append_distinct(&made, sub(lo, hi));
  append_distinct(&made, mul(lo, hi));
  append_distinct(&made, div(hi, lo));
  append_distinct(&made, div(lo, hi));
  return made;
}

// Every r such that r and z make 24 in one step: 24 - z, 24 + z, z - 24,
// 24 / z, 24 * z, z / 24 (the last three only for z != 0: r / 0 is no step).
std::vector<Rational> partners_for_24(const Rational& z) {
  const Rational target(kGame24Target);
  std::vector<Rational> needs;
  append_distinct(&needs, sub(target, z));
  append_distinct(&needs, add(target, z));
  append_distinct(&needs, sub(z, target));
  if (z.is_zero()) return needs;
  append_distinct(&needs, div(target, z));
  append_distinct(&needs, mul(target, z));
  append_distinct(&needs, div(z, target));
  return needs;
}

std::string joined(const std::vector<Rational>& values) {
  std::string text;
  for (const Rational& v : values) text += (text.empty() ? "" : " ") + v.to_string();
  return text;
}

}  // namespace

Game24ValueCheck game24_value_check(const Numbers& numbers) {
  Game24ValueCheck check;
  Numbers state = numbers;
  std::sort(state.begin(), state.end());
  if (state.size() == 1) {
    check.label = state[0] == Rational(kGame24Target) ? Game24Label::kSure : Game24Label::kImpossible;
    return check;
  }
  if (state.size() == 2) {
    const std::vector<Rational> made = pair_results(state[0], state[1]);
    const bool hit = std::find(made.begin(), made.end(), Rational(kGame24Target)) != made.end();
    check.work = numbers_text(state) + ": " + joined(made) + " | " + (hit ? "24" : "no") + "\n";
    check.label = hit ? Game24Label::kSure : Game24Label::kImpossible;
    return check;
  }
  if (state.size() != 3) return check;

  // Each pair against the third number; an integer match ends the check.
  bool fraction_match = false;
  std::vector<std::string> pairs_done;
  for (size_t k = 3; k-- > 0;) {
    Numbers pair;
    for (size_t i = 0; i < 3; ++i) {
      if (i != k) pair.push_back(state[i]);
    }
    const std::string key = numbers_text(pair);
    if (std::find(pairs_done.begin(), pairs_done.end(), key) != pairs_done.end()) continue;
    pairs_done.push_back(key);
    const Rational& z = state[k];
    const std::vector<Rational> needs = partners_for_24(z);
    const std::vector<Rational> made = pair_results(pair[0], pair[1]);
    std::optional<Rational> match;
    for (const Rational& r : made) {
      if (std::find(needs.begin(), needs.end(), r) == needs.end()) continue;
      if (!match || (r.is_integer() && !match->is_integer())) match = r;
    }
    check.work += z.to_string() + ": " + joined(needs) + " | " + key + ": " + joined(made) + " | " +
                  (match ? match->to_string() : "no") + "\n";
    if (match && match->is_integer()) {
      check.label = Game24Label::kSure;
      return check;
    }
    fraction_match = fraction_match || match.has_value();
  }
  check.label = fraction_match ? Game24Label::kLikely : Game24Label::kImpossible;
  return check;
}

}  // namespace seed::tasks
