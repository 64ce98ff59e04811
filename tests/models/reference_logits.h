// What the CausalLM tests compare against: the logits of the plain causal
// forward (forward_full) over some tokens, how far two logit tensors are and
// the tolerance for float32, random tokens, and tiny random models of a
// family with the CPU or the ATen layers.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "models/causal_lm.h"
#include "tests/models/tiny_models.h"

namespace seed::models {

constexpr double kTolerance = 1e-4;  // fp32, max abs difference of logits

inline double max_diff(const at::Tensor& a, const at::Tensor& b) { return (a - b).abs().max().item<double>(); }

inline std::vector<int32_t> random_tokens(int64_t n, int64_t vocab, uint64_t seed) {
  at::Generator gen = at::detail::createCPUGenerator(seed);
  at::Tensor t = torch::randint(vocab, {n}, gen, torch::kLong);
  return std::vector<int32_t>(t.data_ptr<int64_t>(), t.data_ptr<int64_t>() + n);
}

// Logits [T, V] of the plain causal forward over `tokens`.
inline at::Tensor reference_logits(CausalLM& model, const std::vector<int32_t>& tokens) {
  torch::NoGradGuard no_grad;
  std::vector<int64_t> ids(tokens.begin(), tokens.end());
  return model.forward_full(torch::tensor(ids).view({1, -1}))[0];
}

inline std::unique_ptr<CausalLM> random_model(const std::string& family, bool fused, uint64_t seed = 7) {
  LoadOptions options;
  options.fused_cpu_layers = fused;
  return CausalLM::random(testing::tiny_config(family), seed, options);
}

}  // namespace seed::models
