#include "tasks/step_aggregate.h"

#include <algorithm>

#include "models/base/error.h"

namespace seed::tasks {

StepAggregate parse_step_aggregate(const std::string& name, const std::string& where) {
  if (name == "last") return StepAggregate::kLast;
  if (name == "min") return StepAggregate::kMin;
  if (name == "prod") return StepAggregate::kProd;
  SEED_FAIL(kInvalidArgument) << where << " must be \"last\", \"min\" or \"prod\", not \"" << name << "\"";
}

double aggregate_step_scores(const std::vector<double>& scores, StepAggregate aggregate) {
  SEED_CHECK(!scores.empty(), kInternal) << "aggregate of no step scores";
  switch (aggregate) {
    case StepAggregate::kLast:
      return scores.back();
    case StepAggregate::kMin:
      return *std::min_element(scores.begin(), scores.end());
    case StepAggregate::kProd: {
      double product = 1;
      for (const double s : scores) product *= s;
      return product;
    }
  }
  SEED_FAIL(kInternal) << "unknown step aggregate";
}

}  // namespace seed::tasks
