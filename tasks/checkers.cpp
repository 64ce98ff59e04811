// The registered checkers, each in an anonymous-namespace class behind
// make_checker. See checkers.h for what each one accepts.
#include "tasks/checkers.h"

#include <cstdint>
#include <regex>

#include "models/base/error.h"
#include "models/base/trim.h"
#include "tasks/blocksworld.h"
#include "tasks/corpus_formats.h"
#include "tasks/task_regex.h"
#include "tasks/game24.h"

namespace seed::tasks {
namespace {

// The last number in `text` ("1,234.50", "-7"), commas dropped; "" if none.
std::string last_number(std::string_view text) {
  static const std::regex kNumber(R"(-?\d[\d,]*(\.\d+)?)");
  std::string last;
  const std::string s(text);
  for (auto it = std::sregex_iterator(s.begin(), s.end(), kNumber); it != std::sregex_iterator(); ++it) {
    last = it->str();
  }
  std::string out;
  for (const char c : last) {
    if (c != ',') out += c;
  }
  return out;
}

// Decimal text as an exact rational ("2.50" -> 5/2); nullopt if malformed.
std::optional<Rational> decimal(const std::string& text) {
  const size_t dot = text.find('.');
  if (dot == std::string::npos) return Rational::parse(text);
  const std::string digits = text.substr(0, dot) + text.substr(dot + 1);
  int64_t den = 1;
  for (size_t i = dot + 1; i < text.size(); ++i) {
    if (den > INT64_MAX / 10) return std::nullopt;
    den *= 10;
  }
  const std::optional<Rational> num = Rational::parse(digits);
  if (!num || !num->is_integer()) return std::nullopt;
  return Rational::of(num->num(), den);
}

class NumericChecker : public Checker {
 public:
  explicit NumericChecker(std::string field) : field_(field.empty() ? "answer" : std::move(field)) {}
  std::string extract(std::string_view text) const override { return last_number(text); }
  CheckResult check(const Problem& problem, std::string_view text) const override {
    CheckResult result;
    result.answer = extract(text);
    const std::string& gold_text = problem.field(field_);
    const size_t mark = gold_text.rfind("####");
    const std::string gold = last_number(mark == std::string::npos ? gold_text : gold_text.substr(mark));
    const std::optional<Rational> want = decimal(gold), got = decimal(result.answer);
    if (!got) {
      result.reason = "no number in the answer";
    } else if (!want) {
      result.reason = "the gold field '" + field_ + "' holds no number";
    } else if (*got != *want) {
      result.reason = result.answer + " != " + gold;
    }
    result.correct = result.reason.empty();
    return result;
  }
  std::string required_field() const override { return field_; }

 private:
  std::string field_;
};

class Game24Checker : public Checker {
 public:
  explicit Game24Checker(std::string field) : field_(field.empty() ? "input" : std::move(field)) {}
  std::string extract(std::string_view text) const override { return extract_answer(text).value_or(""); }
  CheckResult check(const Problem& problem, std::string_view text) const override {
    CheckResult result;
    const std::optional<std::string> answer = extract_answer(text);
    if (!answer) {
      result.reason = "no 'Answer:' line";
      return result;
    }
    result.answer = *answer;
    const std::optional<Numbers> puzzle = parse_numbers(problem.field(field_));
    if (!puzzle) {
      result.reason = "field '" + field_ + "' is not a list of numbers";
      return result;
    }
    const ExpressionCheck check = check_expression(*answer, *puzzle);
    result.correct = check.correct();
    result.reason = check.reason;
    return result;
  }
  std::string required_field() const override { return field_; }

 private:
  std::string field_;
};

class BlocksworldChecker : public Checker {
 public:
  explicit BlocksworldChecker(std::string field) : field_(field.empty() ? "statement" : std::move(field)) {}
  std::string extract(std::string_view text) const override {
    std::string plan = std::string(text.substr(0, text.find(kBlocksworldPlanEnd)));
    return std::string(trim(plan));
  }
  CheckResult check(const Problem& problem, std::string_view text) const override {
    CheckResult result;
    result.answer = extract(text);
    const std::optional<BlocksInstance> instance = blocks_parse_statement(problem.field(field_));
    if (!instance) {
      result.reason = "field '" + field_ + "' is not a Blocksworld statement";
      return result;
    }
    const PlanCheck plan = blocks_validate_plan(*instance, text);
    result.correct = plan.reaches_goal();
    result.reason = plan.reason;
    return result;
  }
  bool goal_reached(const Problem& problem, std::string_view steps) const override {
    const std::optional<BlocksInstance> instance = blocks_parse_statement(problem.field(field_));
    return instance && blocks_validate_plan(*instance, steps).reaches_goal();
  }
  std::string required_field() const override { return field_; }

 private:
  std::string field_;
};

class ExactChecker : public Checker {
 public:
  explicit ExactChecker(std::string field) : field_(field.empty() ? "answer" : std::move(field)) {}
  std::string extract(std::string_view text) const override { return std::string(trim(text)); }
  CheckResult check(const Problem& problem, std::string_view text) const override {
    CheckResult result;
    result.answer = extract(text);
    result.correct = result.answer == trim(problem.field(field_));
    if (!result.correct) result.reason = "differs from field '" + field_ + "'";
    return result;
  }
  std::string required_field() const override { return field_; }

 private:
  std::string field_;
};

class RegexChecker : public Checker {
 public:
  RegexChecker(std::string field, const std::string& pattern)
      : field_(std::move(field)), pattern_(compile_task_regex(pattern, "checker 'regex'")) {}
  std::string extract(std::string_view text) const override {
    std::smatch match;
    const std::string s(text);
    if (!std::regex_search(s, match, pattern_)) return "";
    return std::string(trim(match.size() > 1 ? match[1].str() : match[0].str()));
  }
  CheckResult check(const Problem& problem, std::string_view text) const override {
    CheckResult result;
    std::smatch match;
    const std::string s(text);
    if (!std::regex_search(s, match, pattern_)) {
      result.reason = "the pattern does not match";
      return result;
    }
    result.answer = extract(text);
    result.correct = field_.empty() || result.answer == trim(problem.field(field_));
    if (!result.correct) result.reason = "differs from field '" + field_ + "'";
    return result;
  }
  std::string required_field() const override { return field_; }

 private:
  std::string field_;
  std::regex pattern_;
};

// Sentences of `text`: runs ending in . ! or ? (and closing quotes).
std::vector<std::string> sentences(const std::string& text) {
  static const std::regex kSentence(R"([^.!?]+[.!?]+["'”’]*)");
  std::vector<std::string> out;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), kSentence); it != std::sregex_iterator(); ++it) {
    const std::string sentence(trim(it->str()));
    if (!sentence.empty()) out.push_back(sentence);
  }
  return out;
}

class ParagraphEndingsChecker : public Checker {
 public:
  explicit ParagraphEndingsChecker(std::string field) : field_(field.empty() ? "input" : std::move(field)) {}
  std::string extract(std::string_view text) const override {
    const size_t mark = text.rfind("Passage:");
    return std::string(trim(mark == std::string_view::npos ? text : text.substr(mark + 8)));
  }
  CheckResult check(const Problem& problem, std::string_view text) const override {
    CheckResult result;
    result.answer = extract(text);
    const std::vector<std::string> endings = sentences(problem.field(field_));
    std::vector<std::string> paragraphs;
    std::string current;
    const std::string passage = result.answer + "\n\n";
    size_t start = 0;
    while (start < passage.size()) {
      const size_t end = passage.find('\n', start);
      const std::string line(trim(passage.substr(start, end - start)));
      start = end + 1;
      if (line.empty()) {
        if (!current.empty()) paragraphs.push_back(current);
        current.clear();
      } else {
        current += (current.empty() ? "" : " ") + line;
      }
    }
    if (paragraphs.size() != endings.size()) {
      result.reason = std::to_string(paragraphs.size()) + " paragraphs for " + std::to_string(endings.size()) +
                      " sentences";
      return result;
    }
    for (size_t i = 0; i < endings.size(); ++i) {
      const std::string& p = paragraphs[i];
      if (p.size() < endings[i].size() || p.compare(p.size() - endings[i].size(), endings[i].size(), endings[i])) {
        result.reason = "paragraph " + std::to_string(i + 1) + " does not end with '" + endings[i] + "'";
        return result;
      }
    }
    result.correct = true;
    return result;
  }
  std::string required_field() const override { return field_; }

 private:
  std::string field_;
};

}  // namespace

const std::vector<std::string>& checker_names() {
  static const std::vector<std::string> names = {"numeric", "game24", "blocksworld", "exact", "regex",
                                                 "paragraph-endings"};
  return names;
}

std::unique_ptr<Checker> make_checker(const CheckerConfig& config) {
  SEED_CHECK(config.name == "regex" || config.pattern.empty(), kInvalidArgument)
      << "checker '" << config.name << "' takes no pattern (only 'regex' does)";
  if (config.name == "numeric") return std::make_unique<NumericChecker>(config.field);
  if (config.name == "game24") return std::make_unique<Game24Checker>(config.field);
  if (config.name == "blocksworld") return std::make_unique<BlocksworldChecker>(config.field);
  if (config.name == "exact") return std::make_unique<ExactChecker>(config.field);
  if (config.name == "paragraph-endings") return std::make_unique<ParagraphEndingsChecker>(config.field);
  if (config.name == "regex") {
    SEED_CHECK(!config.pattern.empty(), kInvalidArgument) << "checker 'regex' needs a 'pattern'";
    return std::make_unique<RegexChecker>(config.field, config.pattern);
  }
  std::string known;
  for (const std::string& name : checker_names()) known += (known.empty() ? "" : ", ") + name;
  SEED_FAIL(kInvalidArgument) << "unknown checker '" << config.name << "' (known: " << known << ")";
}

}  // namespace seed::tasks
