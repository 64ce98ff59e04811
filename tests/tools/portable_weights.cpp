#include "tests/tools/portable_weights.h"

#include <torch/torch.h>

#include <cmath>
#include <filesystem>

#include "models/safetensors.h"

namespace seed::models::testing {

uint64_t splitmix64(uint64_t x) {
  uint64_t z = x + 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

uint64_t fnv1a64(std::string_view text) {
  uint64_t hash = 0xCBF29CE484222325ull;
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 0x100000001B3ull;
  }
  return hash;
}

namespace {

bool ends_with(const std::string& text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

at::Tensor portable_tensor(const std::string& name, const std::vector<int64_t>& shape, uint64_t seed) {
  double offset = 0.0, scale = 0.0;
  if (name.find("norm") != std::string::npos) {
    offset = 1.0, scale = 0.2;
  } else if (ends_with(name, ".bias")) {
    scale = 0.5;
  } else if (name.find("embed_tokens") != std::string::npos) {
    scale = 1.0;
  } else {
    scale = std::sqrt(3.0 / static_cast<double>(shape.at(1)));
  }
  at::Tensor out = torch::empty(shape, torch::kFloat);
  float* data = out.data_ptr<float>();
  const uint64_t key = fnv1a64(name) ^ (seed * 0x9E3779B97F4A7C15ull);
  const int64_t n = out.numel();
  for (int64_t i = 0; i < n; ++i) {
    const double u = static_cast<double>(splitmix64(key + static_cast<uint64_t>(i)) >> 40) * 0x1p-24;
    data[i] = static_cast<float>(offset + scale * (2.0 * u - 1.0));
  }
  return out;
}

std::vector<std::pair<std::string, std::vector<int64_t>>> checkpoint_layout(const ModelConfig& c) {
  std::vector<std::pair<std::string, std::vector<int64_t>>> out;
  const int64_t h = c.hidden_size;
  out.push_back({"model.embed_tokens.weight", {c.vocab_size, h}});
  for (int64_t l = 0; l < c.num_hidden_layers; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    out.push_back({p + "input_layernorm.weight", {h}});
    out.push_back({p + "self_attn.q_proj.weight", {c.q_size(), h}});
    out.push_back({p + "self_attn.k_proj.weight", {c.kv_size(), h}});
    out.push_back({p + "self_attn.v_proj.weight", {c.kv_size(), h}});
    if (c.attention_bias) {
      out.push_back({p + "self_attn.q_proj.bias", {c.q_size()}});
      out.push_back({p + "self_attn.k_proj.bias", {c.kv_size()}});
      out.push_back({p + "self_attn.v_proj.bias", {c.kv_size()}});
    }
    out.push_back({p + "self_attn.o_proj.weight", {h, c.q_size()}});
    if (c.has_qk_norm()) {
      out.push_back({p + "self_attn.q_norm.weight", {c.head_dim}});
      out.push_back({p + "self_attn.k_norm.weight", {c.head_dim}});
    }
    out.push_back({p + "post_attention_layernorm.weight", {h}});
    out.push_back({p + "mlp.gate_proj.weight", {c.intermediate_size, h}});
    out.push_back({p + "mlp.up_proj.weight", {c.intermediate_size, h}});
    out.push_back({p + "mlp.down_proj.weight", {h, c.intermediate_size}});
  }
  out.push_back({"model.norm.weight", {h}});
  if (!c.tie_word_embeddings) out.push_back({"lm_head.weight", {c.vocab_size, h}});
  return out;
}

void write_portable_model(const std::string& config_json, const std::string& model_dir, uint64_t seed) {
  const ModelConfig config = ModelConfig::from_file(config_json);
  std::filesystem::create_directories(model_dir);
  std::filesystem::copy_file(config_json, model_dir + "/config.json",
                             std::filesystem::copy_options::overwrite_existing);
  NamedTensors tensors;
  for (const auto& [name, shape] : checkpoint_layout(config)) {
    tensors.emplace_back(name, portable_tensor(name, shape, seed));
  }
  write_checkpoint(model_dir, tensors);
}

}  // namespace seed::models::testing
