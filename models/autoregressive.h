// Autoregressive decoding of one sequence: prefill, then sample a token at a
// time. The loop `seed generate` streams from and evaluations complete with;
// the speculation layer's `ar` engine is the batched, scheduled version.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "models/causal_lm.h"
#include "models/base/sampling.h"

namespace seed::models {

struct DecodeOptions {
  int64_t max_new_tokens = 128;
  SamplingParams sampling;
  uint64_t seed = 0;     // with `request`, keys every draw (counter_rng)
  uint64_t request = 0;
  std::vector<int32_t> stop_tokens;  // end decoding (not passed to on_token): eos ids
};

enum class DecodeFinish { kLength, kEos, kStopped, kContext };

// Decodes after `prompt` (non-empty) in a fresh sequence of `cache`, which is
// released at the end. Calls on_token for each sampled token; returning
// false stops decoding (a stop string was seen). The draw for position t is
// keyed (seed, request, t, kSample), so the tokens do not depend on anything
// else. Throws what CausalLM::forward throws (prompt past the context).
DecodeFinish decode_autoregressive(CausalLM& model, KvCache& cache, const std::vector<int32_t>& prompt,
                                   const DecodeOptions& options, const std::function<bool(int32_t)>& on_token);

const char* decode_finish_name(DecodeFinish finish);  // "length", "eos", "stop", "context"

}  // namespace seed::models
