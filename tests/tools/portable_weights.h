// Random model weights that any language reproduces bit for bit.
//
// Each tensor's elements come from splitmix64 over (FNV-1a of the tensor's
// Hugging Face name, the seed, the element index), so a Python script can
// build the same model in transformers without reading our files: that is
// how the golden logits in tests/models/golden were made
// (scripts/golden_logits.py mirrors this file).
#pragma once

#include <ATen/Tensor.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "models/model_config.h"

namespace seed::models::testing {

uint64_t splitmix64(uint64_t x);
uint64_t fnv1a64(std::string_view text);

// float32 tensor of `shape` for the parameter `name`. Values are uniform:
// norms in 1 +- 0.2, biases in +-0.5, the embedding in +-1, other matrices
// in +-sqrt(3 / in_features) (unit variance out for unit variance in).
at::Tensor portable_tensor(const std::string& name, const std::vector<int64_t>& shape, uint64_t seed);

// The parameter names and shapes a Hugging Face Llama-family checkpoint of
// `config` holds (lm_head only when untied), in file order.
std::vector<std::pair<std::string, std::vector<int64_t>>> checkpoint_layout(const ModelConfig& config);

// Writes `config_json` (a config.json, copied byte for byte) and
// model.safetensors of portable float32 weights into `model_dir`.
void write_portable_model(const std::string& config_json, const std::string& model_dir, uint64_t seed);

}  // namespace seed::models::testing
