// The cost of a draft step over a target step, measured through the
// handles the engines use, so it holds for the models, devices and threads
// (or ranks) a run actually has: what a pruned candidate tree's thresholds
// are (PrunedTree).
#pragma once

#include <cstdint>

#include "spec/api/drafter.h"
#include "spec/api/target.h"

namespace seed::spec {

struct StepCost {
  // Median cost of one more level of a drafted chain, without what every
  // proposal costs whatever its depth (a draft rank's round trip).
  double draft_s = 0;
  double target_s = 0;        // median one-token target step (an empty draft verified)
  double verify_token_s = 0;  // median of what each node of a verified draft adds to a target step
  // A draft step over a target step (median over rounds): expanding a node
  // whose path confidence p is below it costs more than the p target steps
  // it saves.
  double draft_ratio = 0;
  // What a node of a verified draft adds to a target step, over the step
  // (ForwardCost::verify_token_ratio, median over rounds): near 0 where a
  // forward's cost hardly depends on its tokens (a GPU), about 0.1 on a
  // CPU; a node accepted with a lower probability costs more than it saves.
  double verify_token_ratio = 0;
};

// Rounds of: a target step and a 16-node draft verified after a short
// prompt, each on a slot of its own (freed again), and draft chains of one
// level and of eight; the medians. Throws what the handles throw.
StepCost measure_step_cost(Target& target, Drafter& drafter);

}  // namespace seed::spec
