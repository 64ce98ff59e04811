// StepScorer: scores the steps of solutions given as text; a process reward
// model (spec/reward/prm_scorer.h) is behind it. The search layer asks it
// for step scores without seeing tokens, models or where they run.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace seed::spec {

// One solution: the text before its first step and its steps, each as the
// scorer reads it (the PRM's step tag ending it).
struct ScoreRequest {
  std::string prefix;
  std::vector<std::string> steps;
  size_t first = 0;  // steps [first, size) are scored; earlier ones are context
};

// What scoring cost: tokens the model computed (a prefix it holds is not
// computed again) and tokens of the steps it scored.
struct ScoreUsage {
  int64_t computed_tokens = 0;
  int64_t scored_tokens = 0;
};

struct StepScores {
  std::vector<double> rewards;  // steps [first, size), each in [0, 1]
  ScoreUsage usage;
};

class StepScorer {
 public:
  virtual ~StepScorer() = default;
  // One result per request, in order. Thread-safe: calls from several
  // threads (problems solved at once) are batched together. Throws
  // kInvalidArgument naming what is wrong with a request (a step that does
  // not end with the step tag, no steps to score).
  virtual std::vector<StepScores> score(const std::vector<ScoreRequest>& batch) = 0;
};

}  // namespace seed::spec
