#include "eval/game24_eval.h"

#include <map>
#include <set>

#include "tasks/corpus.h"
#include "tasks/corpus_formats.h"

namespace seed::eval {
namespace {

constexpr int64_t kProposeTokens = 200;
constexpr int64_t kValueTokens = 320;  // the worked check (tasks/game24.h), then the label
constexpr int64_t kCotTokens = 160;

// Completes `prompt` until eos, `stop` (cut off), or `limit` tokens.
std::string complete(spec::Engine& engine, const std::string& prompt, int64_t limit, const SamplingParams& sampling,
                     uint64_t seed, uint64_t stream, const std::string& stop) {
  spec::GenRequest request;
  request.prompt = prompt;
  request.max_new_tokens = limit;
  if (!stop.empty()) request.stop = {stop};
  request.sampling = sampling;
  request.seed = seed;
  request.stream = stream;
  return engine.generate({request}).front().text;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    const size_t end = text.find('\n', start);
    const std::string line = text.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (!line.empty()) lines.push_back(line);
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return lines;
}

int label_index(tasks::Game24Label label) { return static_cast<int>(label); }

}  // namespace

Game24EvalResult evaluate_game24(spec::Engine& engine, const std::vector<tasks::Numbers>& puzzles,
                                 const Game24EvalOptions& options) {
  Game24EvalResult result;
  tasks::Game24Solver solver;
  const SamplingParams greedy{0.0f, 0, 1.0f};
  uint64_t stream = 0;

  std::vector<tasks::Numbers> states;  // for the value judgments
  for (const tasks::Numbers& puzzle : puzzles) {
    const std::string input = tasks::numbers_text(puzzle);
    // Proposals: every line must be a valid step from the puzzle.
    const std::string proposals = complete(engine, tasks::render_prompt(tasks::kGame24ProposePrompt, {{"input", input}}),
                                           kProposeTokens, greedy, options.seed, stream++, "\n\n");
    for (const std::string& line : lines_of(proposals)) {
      ++result.step_lines;
      result.valid_step_lines += tasks::check_step(line, puzzle).valid();
    }
    states.push_back(puzzle);
    for (const tasks::Game24Step& step : tasks::game24_next_steps(puzzle)) states.push_back(step.left);
    // One sampled chain of thought.
    const std::string cot =
        complete(engine, tasks::render_prompt(tasks::kGame24CotPrompt, {{"input", input}}), kCotTokens,
                 SamplingParams{options.temperature, 0, 1.0f}, options.seed, stream++, "");
    ++result.cot_puzzles;
    const auto answer = tasks::extract_answer(cot);
    result.cot_correct += answer && tasks::check_expression(*answer, puzzle).correct();
    if (options.on_progress) options.on_progress("puzzles", result.cot_puzzles, puzzles.size());
  }

  // Distinct states, in a fixed order, optionally capped.
  std::set<std::string> seen;
  std::vector<tasks::Numbers> unique;
  for (const auto& state : states) {
    if (seen.insert(tasks::numbers_text(state)).second) unique.push_back(state);
  }
  if (options.max_value_states > 0 && unique.size() > static_cast<size_t>(options.max_value_states)) {
    unique.resize(options.max_value_states);
  }
  const std::map<std::string, tasks::Game24Label> labels = {{"sure", tasks::Game24Label::kSure},
                                                            {"likely", tasks::Game24Label::kLikely},
                                                            {"impossible", tasks::Game24Label::kImpossible}};
  for (const auto& state : unique) {
    const std::string text = complete(
        engine, tasks::render_prompt(tasks::kGame24ValuePrompt, {{"input", tasks::numbers_text(state)}}), kValueTokens,
        greedy, options.seed, stream++, "");
    const auto lines = lines_of(text);
    const std::string verdict = lines.empty() ? "" : lines.back();  // after the worked check
    const auto judged = labels.find(verdict);
    const tasks::Game24Label truth = solver.label(state);
    result.value_judgments.push_back({tasks::numbers_text(state), truth, verdict});
    ++result.value_states;
    if (judged == labels.end()) {
      ++result.value_unparsed;
    } else {
      ++result.value_confusion[label_index(truth)][label_index(judged->second)];
      result.value_agree += judged->second == truth;
    }
    if (options.on_progress) options.on_progress("value states", result.value_states, unique.size());
  }
  return result;
}

}  // namespace seed::eval
