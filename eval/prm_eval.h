// Step accuracy of a process reward model on the Game of 24 test puzzles
// (Tree of Thoughts' 24.csv rows 900-999), read as tasks/game24-prm reads
// states (the corpus_formats.h prm format): every state one step from each
// puzzle, and random paths of three steps from it (half kept on a path to
// 24) scored at their second and third steps. A score above one half says
// the numbers left can still make 24; the exact solver says whether they can.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "spec/api/step_scorer.h"
#include "tasks/game24.h"

namespace seed::eval {

struct PrmEvalResult {
  std::array<int64_t, 4> states{};   // by depth (steps taken, 1-3)
  std::array<int64_t, 4> correct{};
  int64_t solvable = 0;              // states the solver says can make 24
  int64_t computed_tokens = 0, scored_tokens = 0;
  int64_t total_states() const { return states[1] + states[2] + states[3]; }
  double accuracy() const;
  double accuracy(int depth) const;
};

// `paths` random three-step paths per puzzle, drawn from `seed`.
PrmEvalResult evaluate_prm(spec::StepScorer& scorer, const std::vector<tasks::Numbers>& puzzles, int paths,
                           uint64_t seed);

}  // namespace seed::eval
