// Requests as a search sends them, for the prefix cache: six prompts with a
// common 40-token stem (two full KV blocks of 16 and more), in pairs of
// identical prompts (the samples of one state), on the tiny models'
// 64-token vocabulary.
#pragma once

#include <cstdint>
#include <vector>

#include "spec/api/engine.h"

namespace seed::testing {

inline std::vector<spec::GenRequest> shared_prefix_requests(float temperature, int64_t max_new_tokens = 12) {
  std::vector<spec::GenRequest> out;
  for (int i = 0; i < 6; ++i) {
    spec::GenRequest r;
    for (int t = 0; t < 40; ++t) r.prompt_tokens.push_back((5 * t + 2) % 64);
    for (int t = 0; t <= i / 2; ++t) r.prompt_tokens.push_back((11 * t + i / 2) % 64);
    r.max_new_tokens = max_new_tokens;
    r.sampling.temperature = temperature;
    r.seed = 7;
    r.stream = static_cast<uint64_t>(i);
    out.push_back(r);
  }
  return out;
}

inline int64_t prompt_tokens_of(const std::vector<spec::GenRequest>& requests) {
  int64_t total = 0;
  for (const spec::GenRequest& r : requests) total += static_cast<int64_t>(r.prompt_tokens.size());
  return total;
}

}  // namespace seed::testing
