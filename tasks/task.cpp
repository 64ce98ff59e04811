// Task at run time: filling prompts for states and reading completions.
#include "tasks/task.h"

#include <algorithm>
#include <cctype>
#include <regex>

#include "models/base/error.h"
#include "models/base/trim.h"
#include "tasks/prompt_template.h"

namespace seed::tasks {
namespace {

std::vector<std::string> nonempty_lines(std::string_view text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t end = std::min(text.find('\n', start), text.size());
    std::string line(trim(text.substr(start, end - start)));
    if (!line.empty()) lines.push_back(std::move(line));
    start = end + 1;
  }
  return lines;
}

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

}  // namespace

std::optional<std::string> Task::lookup(const std::string& name, const Problem& problem, const State& state,
                                        const Thought* parts) const {
  if (parts != nullptr) {
    const auto part = parts->parts.find(name);
    if (part != parts->parts.end()) return part->second;
  }
  const auto data = problem.fields.find(name);
  if (data != problem.fields.end()) return data->second;
  const std::vector<Thought>& thoughts = state.thoughts;
  if (name == "steps") return steps_text(state);
  if (name == "prior_steps") {
    std::string out;
    for (size_t i = 0; i + 1 < thoughts.size(); ++i) out += thoughts[i].text + "\n";
    return out;
  }
  if (name == "thought") return thoughts.empty() ? std::string() : thoughts.back().text;
  if (name == "depth") return std::to_string(thoughts.size());
  if (name == "chain" && state.chain) return *state.chain;
  if (name == "examples") return spec_.examples;
  for (const StateFieldSpec& field : spec_.state_fields) {
    if (field.name != name) continue;
    const std::regex pattern(field.pattern);
    for (auto it = thoughts.rbegin(); it != thoughts.rend(); ++it) {
      std::smatch match;
      if (std::regex_search(it->text, match, pattern)) return std::string(trim(match[1].str()));
    }
    return fill(field.initial, source_ + ": field 'state." + name + ".initial'", problem, State{}, nullptr);
  }
  return std::nullopt;
}

std::string Task::fill(const std::string& tmpl, const std::string& where, const Problem& problem,
                       const State& state, const Thought* parts) const {
  return fill_template(
      tmpl, [&](const std::string& name) { return lookup(name, problem, state, parts); }, where);
}

std::string Task::generation_prompt(size_t stage, const Problem& problem, const State& state,
                                    const Thought& partial) const {
  SEED_CHECK(stage < spec_.generate.stages.size(), kInternal) << "generation stage " << stage << " out of range";
  return fill(spec_.generate.stages[stage].prompt, source_ + ": field 'generate'", problem, state, &partial);
}

std::vector<Thought> Task::split_proposals(std::string_view completion) const {
  std::vector<Thought> thoughts;
  const std::string& output = spec_.generate.stages.front().output;
  for (std::string& line : nonempty_lines(completion)) {
    Thought thought;
    thought.parts[output] = line;
    thought.text = std::move(line);
    thoughts.push_back(std::move(thought));
  }
  return thoughts;
}

Thought Task::add_stage(Thought partial, size_t stage, std::string_view completion) const {
  SEED_CHECK(stage < spec_.generate.stages.size(), kInternal) << "generation stage " << stage << " out of range";
  partial.parts[spec_.generate.stages[stage].output] = std::string(trim(completion));
  if (stage + 1 == spec_.generate.stages.size()) {
    partial.text = fill_template(
        spec_.generate.thought,
        [&](const std::string& name) -> std::optional<std::string> {
          const auto it = partial.parts.find(name);
          if (it == partial.parts.end()) return std::nullopt;
          return it->second;
        },
        source_ + ": field 'generate.thought'");
  }
  return partial;
}

std::string Task::evaluation_prompt(const Problem& problem, const State& state) const {
  const Thought* last = state.thoughts.empty() ? nullptr : &state.thoughts.back();
  if (state.chain.has_value() && !spec_.evaluate.chain_prompt.empty()) {
    return fill(spec_.evaluate.chain_prompt, source_ + ": field 'evaluate.chain_prompt'", problem, state, last);
  }
  return fill(spec_.evaluate.prompt.prompt, source_ + ": field 'evaluate.prompt'", problem, state, last);
}

void Task::check_scores_chains(const std::string& search) const {
  SEED_CHECK(chains_unscorable_.empty(), kInvalidArgument)
      << source_ << ": " << search << " scores whole chains of thought, but " << chains_unscorable_;
}

std::optional<double> Task::parse_value(std::string_view completion) const {
  const ValueSpec& value = spec_.evaluate.value;
  if (!value.labels.empty()) {
    // The earliest label that appears as a whole word.
    const std::string text = lower(completion);
    size_t best_pos = std::string::npos;
    std::optional<double> best;
    for (const auto& [label, number] : value.labels) {
      const std::string needle = lower(label);
      for (size_t pos = text.find(needle); pos != std::string::npos; pos = text.find(needle, pos + 1)) {
        const bool starts = pos == 0 || !word_char(text[pos - 1]);
        const size_t end = pos + needle.size();
        const bool ends = end == text.size() || !word_char(text[end]);
        if (starts && ends) {
          if (pos < best_pos) {
            best_pos = pos;
            best = number;
          }
          break;
        }
      }
    }
    return best;
  }
  std::smatch match;
  const std::string text(completion);
  if (!std::regex_search(text, match, std::regex(value.number))) return std::nullopt;
  try {
    const double number = std::stod(match[1].str());
    if (number < value.min || number > value.max) return std::nullopt;
    return number;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

double Task::max_value() const {
  const ValueSpec& value = spec_.evaluate.value;
  if (spec_.evaluate.mode != EvaluateMode::kValue) return 1.0;
  double best = value.unparsed;
  if (value.labels.empty()) return std::max(best, value.max);
  for (const auto& label : value.labels) best = std::max(best, label.second);
  return best;
}

std::string Task::prm_prefix(const Problem& problem) const {
  return fill(spec_.evaluate.prm.prefix, source_ + ": field 'evaluate.prefix'", problem, State{}, nullptr);
}

std::vector<std::string> Task::prm_steps(const State& state) const {
  std::vector<std::string> steps;
  for (size_t i = 0; i < state.thoughts.size(); ++i) {
    steps.push_back(fill_template(
        spec_.evaluate.prm.step,
        [&](const std::string& name) -> std::optional<std::string> {
          if (name == "thought") return state.thoughts[i].text;
          if (name == "index") return std::to_string(i + 1);
          return std::nullopt;
        },
        source_ + ": field 'evaluate.step'"));
  }
  return steps;
}

std::string Task::vote_prompt(const Problem& problem, const State& parent,
                              const std::vector<const Thought*>& candidates) const {
  std::string choices;
  for (size_t i = 0; i < candidates.size(); ++i) {
    choices += fill_template(
        spec_.evaluate.choice,
        [&](const std::string& name) -> std::optional<std::string> {
          if (name == "index") return std::to_string(i + 1);
          if (name == "thought") return candidates[i]->text;
          return std::nullopt;
        },
        source_ + ": field 'evaluate.choice'");
  }
  return fill_template(
      spec_.evaluate.prompt.prompt,
      [&](const std::string& name) -> std::optional<std::string> {
        if (name == "choices") return choices;
        return lookup(name, problem, parent, nullptr);
      },
      source_ + ": field 'evaluate.prompt'");
}

std::optional<size_t> Task::parse_vote(std::string_view completion, size_t count) const {
  std::smatch match;
  const std::string text(completion);
  if (!std::regex_search(text, match, std::regex(spec_.evaluate.vote_pattern, std::regex::icase))) {
    return std::nullopt;
  }
  const std::string digits = match[1].str();
  if (digits.empty() || digits.size() > 6 || !std::all_of(digits.begin(), digits.end(), ::isdigit)) {
    return std::nullopt;
  }
  const size_t choice = std::stoul(digits);
  if (choice < 1 || choice > count) return std::nullopt;
  return choice - 1;
}

bool Task::is_final(const Problem& problem, const State& state) const {
  if (state.thoughts.empty()) return false;
  if (!spec_.final_pattern.empty() && std::regex_search(state.thoughts.back().text, std::regex(spec_.final_pattern))) {
    return true;
  }
  return spec_.final_at_goal && checker_->goal_reached(problem, steps_text(state));
}

std::string Task::steps_text(const State& state) const {
  std::string out;
  for (const Thought& thought : state.thoughts) out += thought.text + "\n";
  return out;
}

std::string Task::answer_prompt(const Problem& problem, const State& state) const {
  SEED_CHECK(spec_.answer.has_value(), kInvalidArgument) << source_ << ": the task has no 'answer' prompt";
  const Thought* last = state.thoughts.empty() ? nullptr : &state.thoughts.back();
  return fill(spec_.answer->prompt, source_ + ": field 'answer.prompt'", problem, state, last);
}

std::string Task::cot_prompt(const Problem& problem) const {
  SEED_CHECK(spec_.cot.has_value(), kInvalidArgument) << source_ << ": the task has no 'cot' prompt";
  return fill(spec_.cot->prompt, source_ + ": field 'cot.prompt'", problem, State{}, nullptr);
}

State Task::state_from_text(std::string_view text) const {
  State state;
  for (Thought& thought : split_proposals(text)) state.thoughts.push_back(std::move(thought));
  state.chain = std::string(text);
  return state;
}

}  // namespace seed::tasks
