// The losslessness tests' trials and their ground truth: many requests of
// one prompt, each sampled on its own random stream, and the law a target
// alone would give their first two tokens, computed from its logits.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <vector>

#include "models/causal_lm.h"
#include "spec/api/engine.h"

namespace seed::testing {

// p(x1) p(x2 | x1) after `prompt` at `temperature`, at x1 * vocab + x2;
// `vocab` is the target's whole vocabulary.
inline std::vector<double> two_token_law(models::CausalLM& target, const std::vector<int32_t>& prompt,
                                         float temperature, int64_t vocab) {
  torch::NoGradGuard no_grad;
  const auto next = [&](const std::vector<int64_t>& seq) {
    return torch::softmax(target.forward_full(torch::tensor(seq).unsqueeze(0))[0][-1] / temperature, -1);
  };
  std::vector<int64_t> seq(prompt.begin(), prompt.end());
  const at::Tensor first = next(seq);
  std::vector<double> law(vocab * vocab);
  seq.push_back(0);
  for (int64_t x = 0; x < vocab; ++x) {
    seq.back() = x;
    const at::Tensor second = next(seq);
    for (int64_t y = 0; y < vocab; ++y) law[x * vocab + y] = first[x].item<double>() * second[y].item<double>();
  }
  return law;
}

// `trials` requests of `prompt` sampled as `sampling`, on streams 0 to
// trials - 1 of run seed 9.
inline std::vector<spec::GenRequest> sampled_trials(const std::vector<int32_t>& prompt,
                                                    const SamplingParams& sampling, int trials,
                                                    int max_new_tokens) {
  std::vector<spec::GenRequest> batch(trials);
  for (int i = 0; i < trials; ++i) {
    batch[i].prompt_tokens = prompt;
    batch[i].max_new_tokens = max_new_tokens;
    batch[i].sampling = sampling;
    batch[i].seed = 9;
    batch[i].stream = static_cast<uint64_t>(i);
  }
  return batch;
}

}  // namespace seed::testing
