// How a trajectory's step scores (a process reward model's, each in
// [0, 1]) become one score for the state: search-and-learn's aggregates.
#pragma once

#include <string>
#include <vector>

namespace seed::tasks {

enum class StepAggregate {
  kLast,  // the last step's score: how promising the state is now
  kMin,   // the weakest step: a trajectory is as good as its worst step
  kProd,  // the product: the chance that every step is right
};

// Throws kInvalidArgument naming `where` for a name other than last, min, prod.
StepAggregate parse_step_aggregate(const std::string& name, const std::string& where);

// REQUIRES !scores.empty().
double aggregate_step_scores(const std::vector<double>& scores, StepAggregate aggregate);

}  // namespace seed::tasks
