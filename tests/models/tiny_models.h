// Tiny random models of every family variant seed supports, for tests.
#pragma once

#include <string>
#include <vector>

#include "models/causal_lm.h"
#include "models/model_config.h"

namespace seed::models::testing {

// "llama" (GQA, untied), "llama3" (Llama-3 rope scaling), "mistral",
// "qwen2" (q/k/v bias), "qwen3" (q/k norms, head_dim apart from
// hidden / heads, tied), "tied" (tied embeddings, no GQA).
inline ModelConfig tiny_config(const std::string& variant) {
  ModelConfig c;
  c.model_type = "llama";
  c.vocab_size = 64;
  c.hidden_size = 32;
  c.intermediate_size = 48;
  c.num_hidden_layers = 2;
  c.num_attention_heads = 4;
  c.num_key_value_heads = 2;
  c.head_dim = 8;
  c.max_position_embeddings = 96;
  c.rms_norm_eps = 1e-5;
  if (variant == "llama3") {
    c.rope_theta = 500000.0;
    c.rope_scaling.rope_type = "llama3";
    c.rope_scaling.factor = 8.0;
    c.rope_scaling.low_freq_factor = 1.0;
    c.rope_scaling.high_freq_factor = 4.0;
    c.rope_scaling.original_max_position_embeddings = 16;
  } else if (variant == "mistral") {
    c.model_type = "mistral";
    c.num_key_value_heads = 1;
  } else if (variant == "qwen2") {
    c.model_type = "qwen2";
    c.attention_bias = true;
    c.tie_word_embeddings = true;
  } else if (variant == "qwen3") {
    c.model_type = "qwen3";
    c.head_dim = 12;  // 4 heads x 12 = 48 query columns from a hidden size of 32
    c.rms_norm_eps = 1e-6;
    c.tie_word_embeddings = true;
  } else if (variant == "tied") {
    c.tie_word_embeddings = true;
    c.num_key_value_heads = 4;
  }
  return c;
}

// Load options for a model whose parameters a test changes or copies (a
// model otherwise holds its matrices only packed).
inline LoadOptions keeping_parameters() {
  LoadOptions options;
  options.keep_parameters = true;
  return options;
}

inline std::vector<std::string> all_variants() { return {"llama", "llama3", "mistral", "qwen2", "qwen3", "tied"}; }

}  // namespace seed::models::testing
