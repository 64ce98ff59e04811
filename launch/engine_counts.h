// The engine counters `seed run` keeps per problem (a results.jsonl line),
// and their sums. Acceptance alpha and tokens per target forward tau are
// derived from the sums by spec::EngineStats's own definitions, the ones
// `seed bench` prints, so that a run, a sweep and a bench report one figure
// under one name: alpha = accepted / tested draft tokens, tau = tokens a
// sequence gains per target forward it takes part in; draft_s is the
// drafters' time (summed over drafters), whatever the drafter kind.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>

#include "spec/api/engine.h"

namespace seed::launch {

// What one problem added to the engine's stats (`after` - `before`), as the
// fields of its results line.
inline nlohmann::json engine_counts_json(const spec::EngineStats& before, const spec::EngineStats& after) {
  const auto rounds = [](const spec::EngineStats& s) {
    return s.thought.target_forwards + s.evaluation.target_forwards;
  };
  const auto round_tokens = [](const spec::EngineStats& s) {
    return s.thought.round_tokens + s.evaluation.round_tokens;
  };
  return {{"tokens", after.generated_tokens - before.generated_tokens},
          {"target_forwards", after.target_forwards - before.target_forwards},
          {"drafted_tokens", after.drafted_tokens - before.drafted_tokens},
          {"accepted_tokens", after.accepted_tokens - before.accepted_tokens},
          {"rejections", after.rejections - before.rejections},
          {"sequence_forwards", rounds(after) - rounds(before)},
          {"sequence_tokens", round_tokens(after) - round_tokens(before)},
          {"prompt_tokens", after.prefill.prompt_tokens - before.prefill.prompt_tokens},
          {"prefill_tokens", after.prefill.computed_tokens - before.prefill.computed_tokens},
          {"draft_s", after.draft_s - before.draft_s}};
}

// Adds one results line's counters to `total` (lines written before a field
// existed count it as 0).
inline void add_engine_counts(const nlohmann::json& record, spec::EngineStats* total) {
  const auto get = [&](const char* key) { return record.value(key, int64_t{0}); };
  total->generated_tokens += get("tokens");
  total->target_forwards += get("target_forwards");
  total->drafted_tokens += get("drafted_tokens");
  total->accepted_tokens += get("accepted_tokens");
  total->rejections += get("rejections");
  total->thought.target_forwards += get("sequence_forwards");
  total->thought.round_tokens += get("sequence_tokens");
  total->prefill.prompt_tokens += get("prompt_tokens");
  total->prefill.computed_tokens += get("prefill_tokens");
  total->draft_s += record.value("draft_s", 0.0);
}

}  // namespace seed::launch
