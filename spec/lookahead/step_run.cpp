#include "spec/lookahead/step_run.h"

#include <algorithm>

#include "models/base/counter_rng.h"

namespace seed::spec {
namespace {

uint64_t step_stream(uint64_t stream, size_t position, StepRole role, int alternative) {
  const uint64_t where = static_cast<uint64_t>(position) << 2 | static_cast<uint64_t>(role);
  return mix64(stream * 0x9e3779b97f4a7c15ULL ^ where ^ static_cast<uint64_t>(alternative) * 0xd6e8feb86659fd93ULL);
}

}  // namespace

GenRequest StepRun::step(const std::vector<int32_t>& path, int64_t max_step_tokens, StepRole role,
                         std::vector<std::string> stop, int alternative) const {
  GenRequest r;
  r.prompt_tokens = prompt;
  r.prompt_tokens.insert(r.prompt_tokens.end(), path.begin(), path.end());
  r.max_new_tokens = std::min(budget(path), max_step_tokens);
  r.stop = std::move(stop);
  r.sampling = request->sampling;
  r.seed = request->seed;
  r.stream = step_stream(request->stream, path.size(), role, alternative);
  r.kind = request->kind;
  r.priority = request->priority;
  r.group = request->group;
  return r;
}

int64_t StepRun::budget(const std::vector<int32_t>& path) const {
  return output->remaining() - static_cast<int64_t>(path.size() - committed.size());
}

bool StepRun::commit(const Completion& step) {
  for (const int32_t token : step.tokens) {
    committed.push_back(token);
    if (output->push(token)) return false;
  }
  if (step.finish == FinishReason::kEos) {
    output->end(FinishReason::kEos);
  } else if (step.finish == FinishReason::kContext || step.finish == FinishReason::kError ||
             step.finish == FinishReason::kCancelled) {
    output->end(step.finish, step.error);
  }
  return running();
}

bool steady_call(const StepOwners& owners, bool StepRun::*seen) {
  bool steady = true;
  for (const auto& owner : owners) steady = steady && owner.first->*seen;
  for (const auto& owner : owners) owner.first->*seen = true;
  return steady;
}

}  // namespace seed::spec
