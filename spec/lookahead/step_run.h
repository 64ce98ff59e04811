// StepRun: one request of a LookaheadEngine in flight: its prompt, the
// tokens committed so far and the output they make, and the tree of
// drafted steps (step_tree.h) its rounds work on. The step requests the
// engine sends the draft and target engines are made here, each keyed by
// a random stream of its own.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "spec/api/engine.h"
#include "spec/engine/request_output.h"
#include "spec/lookahead/step_tree.h"

namespace seed::spec {

// Who writes a step: part of its random stream.
enum class StepRole : uint64_t { kDraft = 1, kTarget = 2 };

struct StepRun {
  size_t index = 0;                      // in the batch
  const GenRequest* request = nullptr;   // borrowed for generate()
  std::vector<int32_t> prompt;
  std::vector<int32_t> committed;
  std::optional<RequestOutput> output;
  std::optional<Completion> completion;  // once settled
  std::optional<StepTree> tree;          // while running
  // Whether a draft call and a target call have read the prompt. A call
  // that reads a prompt first also prefills it, so its time says little of
  // a step's and is left out of the adaptive lookahead's measurements.
  bool drafted = false;
  bool targeted = false;

  // The step after the generated tokens `path` (committed ones first), at
  // most `max_step_tokens` long and within the request's budget; its
  // stream is the request's, the position the step starts at, `role` and
  // `alternative`, so that every step draws its own randomness.
  GenRequest step(const std::vector<int32_t>& path, int64_t max_step_tokens, StepRole role,
                  std::vector<std::string> stop, int alternative = 0) const;
  // Tokens the request may still generate after those of `path`.
  int64_t budget(const std::vector<int32_t>& path) const;
  bool running() const { return !output->finished(); }
  // Appends a committed step; false once the request has finished.
  bool commit(const Completion& step);
};

// The runs and nodes a batch of step requests is for, one per request.
using StepOwners = std::vector<std::pair<StepRun*, StepTree::Id>>;

// Whether every owner's run had been read by a call of the kind `seen`
// marks (&StepRun::drafted or &StepRun::targeted), marking them all as
// read by this one.
bool steady_call(const StepOwners& owners, bool StepRun::*seen);

}  // namespace seed::spec
