#include "spec/lookahead/step_verifier.h"

#include <cctype>

#include "models/base/error.h"

namespace seed::spec {
namespace {

class ExactVerifier : public StepVerifier {
 public:
  bool same(const std::string& target_step, const std::string& draft_step) const override {
    return target_step == draft_step;
  }
  std::string name() const override { return "exact"; }
};

class NormalizedVerifier : public StepVerifier {
 public:
  bool same(const std::string& target_step, const std::string& draft_step) const override {
    return normalize_step(target_step) == normalize_step(draft_step);
  }
  std::string name() const override { return "normalized"; }
};

bool digit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

// The number starting at `text[i]` (digits with optional thousands commas
// and a fraction), in canonical form; advances `i` past it.
std::string canonical_number(const std::string& text, size_t& i) {
  std::string whole, fraction;
  while (i < text.size()) {
    if (digit(text[i])) {
      whole += text[i++];
    } else if (text[i] == ',' && !whole.empty() && i + 3 < text.size() && digit(text[i + 1]) &&
               digit(text[i + 2]) && digit(text[i + 3]) && (i + 4 == text.size() || !digit(text[i + 4]))) {
      ++i;  // a thousands separator: exactly three digits follow
    } else {
      break;
    }
  }
  if (i + 1 < text.size() && text[i] == '.' && digit(text[i + 1])) {
    ++i;
    while (i < text.size() && digit(text[i])) fraction += text[i++];
  }
  while (whole.size() > 1 && whole.front() == '0') whole.erase(whole.begin());
  while (!fraction.empty() && fraction.back() == '0') fraction.pop_back();
  return fraction.empty() ? whole : whole + "." + fraction;
}

}  // namespace

std::string normalize_step(const std::string& step) {
  std::string out;
  bool space = false;
  for (size_t i = 0; i < step.size();) {
    const char c = step[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      space = !out.empty();
      ++i;
      continue;
    }
    if (space) out += ' ';
    space = false;
    const bool starts_number = digit(c) && (i == 0 || !std::isalpha(static_cast<unsigned char>(step[i - 1])));
    if (c == '+' && i + 1 < step.size() && digit(step[i + 1]) && (out.empty() || out.back() == ' ' || out.back() == '(')) {
      ++i;  // an explicit plus sign on a number
      continue;
    }
    if (starts_number) {
      out += canonical_number(step, i);
      continue;
    }
    out += c;
    ++i;
  }
  return out;
}

std::unique_ptr<StepVerifier> make_step_verifier(const std::string& name) {
  if (name == "exact") return std::make_unique<ExactVerifier>();
  if (name == "normalized") return std::make_unique<NormalizedVerifier>();
  SEED_FAIL(kInvalidArgument) << "step verifier '" << name << "': use exact | normalized";
}

}  // namespace seed::spec
