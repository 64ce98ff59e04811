#include "eval/prm_eval.h"

#include <random>
#include <string>

#include "tasks/corpus.h"
#include "tasks/corpus_formats.h"
#include "tasks/random_draw.h"

namespace seed::eval {
namespace {

std::string step_text(const tasks::Game24Step& step) { return step.text() + std::string(tasks::kGame24PrmTag) + "\n"; }

}  // namespace

double PrmEvalResult::accuracy() const {
  const int64_t n = total_states();
  return n > 0 ? static_cast<double>(correct[1] + correct[2] + correct[3]) / static_cast<double>(n) : 0.0;
}

double PrmEvalResult::accuracy(int depth) const {
  return states.at(depth) > 0 ? static_cast<double>(correct.at(depth)) / static_cast<double>(states.at(depth)) : 0.0;
}

PrmEvalResult evaluate_prm(spec::StepScorer& scorer, const std::vector<tasks::Numbers>& puzzles, int paths,
                           uint64_t seed) {
  tasks::Game24Solver solver;
  PrmEvalResult result;
  std::mt19937_64 rng = tasks::derive_engine(seed, 0);
  for (const tasks::Numbers& puzzle : puzzles) {
    const std::string prefix = tasks::render_prompt(tasks::kGame24PrmPrefix, {{"input", tasks::numbers_text(puzzle)}});
    std::vector<spec::ScoreRequest> batch;
    std::vector<std::vector<bool>> labels;  // per request, per scored step
    for (const tasks::Game24Step& step : tasks::game24_next_steps(puzzle)) {
      batch.push_back({prefix, {step_text(step)}, 0});
      labels.push_back({solver.solvable(step.left)});
    }
    for (int p = 0; p < paths; ++p) {
      const bool on_path = p % 2 == 0 && solver.solvable(puzzle);
      tasks::Numbers state = puzzle;
      spec::ScoreRequest request{prefix, {}, 1};
      std::vector<bool> path_labels;
      for (int depth = 1; depth <= 3; ++depth) {
        std::vector<tasks::Game24Step> steps = tasks::game24_next_steps(state);
        if (on_path) {
          std::vector<tasks::Game24Step> kept;
          for (tasks::Game24Step& s : steps) {
            if (solver.solvable(s.left)) kept.push_back(std::move(s));
          }
          steps = std::move(kept);
        }
        const tasks::Game24Step& step = steps[tasks::draw_below(rng, steps.size())];
        request.steps.push_back(step_text(step));
        state = step.left;
        if (depth > 1) path_labels.push_back(solver.solvable(state));
      }
      batch.push_back(std::move(request));
      labels.push_back(std::move(path_labels));
    }
    const std::vector<spec::StepScores> scored = scorer.score(batch);
    for (size_t r = 0; r < batch.size(); ++r) {
      for (size_t s = 0; s < labels[r].size(); ++s) {
        const int depth = static_cast<int>(batch[r].first + s + 1);
        const bool says_solvable = scored[r].rewards[s] > 0.5;
        result.states[depth] += 1;
        result.correct[depth] += says_solvable == labels[r][s] ? 1 : 0;
        result.solvable += labels[r][s] ? 1 : 0;
      }
      result.computed_tokens += scored[r].usage.computed_tokens;
      result.scored_tokens += scored[r].usage.scored_tokens;
    }
  }
  return result;
}

}  // namespace seed::eval
