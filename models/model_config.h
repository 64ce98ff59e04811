// ModelConfig: the shape of a Llama-family decoder, read from config.json.
//
// Covers the families seed loads: Llama 2/3 (with Llama-3 rope scaling),
// Mistral, Qwen2 (bias on q/k/v), Qwen3 (RMSNorm on each head's q and k).
// Fields keep Hugging Face's names so that a config.json maps onto them one
// to one.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace seed::models {

struct RopeScaling {
  std::string rope_type = "default";  // "default" (none), "linear" or "llama3"
  double factor = 1.0;
  double low_freq_factor = 1.0;   // llama3 only
  double high_freq_factor = 4.0;  // llama3 only
  int64_t original_max_position_embeddings = 8192;  // llama3 only
};

struct ModelConfig {
  std::string model_type = "llama";  // "llama", "mistral", "qwen2" or "qwen3"
  int64_t vocab_size = 0;
  int64_t hidden_size = 0;
  int64_t intermediate_size = 0;
  int64_t num_hidden_layers = 0;
  int64_t num_attention_heads = 0;
  int64_t num_key_value_heads = 0;  // defaults to num_attention_heads
  int64_t head_dim = 0;             // defaults to hidden_size / num_attention_heads (Qwen3: 128)
  int64_t max_position_embeddings = 2048;
  double rms_norm_eps = 1e-6;
  double rope_theta = 10000.0;
  RopeScaling rope_scaling;
  bool attention_bias = false;  // q/k/v biases (Qwen2 sets them)
  bool tie_word_embeddings = false;
  // Rows of the LM head: 0 for one per token; else the head scores only
  // the draft_vocab_size tokens its checkpoint names in `d2t` (a draft's
  // reduced vocabulary, as EAGLE-3 stores it), and the logits of every
  // other token are -inf. The embedding keeps every token.
  int64_t draft_vocab_size = 0;
  int64_t bos_token_id = 1;
  std::vector<int64_t> eos_token_ids = {2};  // config.json: int or list
  std::string torch_dtype = "float32";       // dtype the weights are stored in
  // An EDD draft (Zheng & Wang 2025, sec. 3.1): one decoder layer whose inputs
  // are, for the accepted positions, a target's hidden states after its
  // layer `edd_target_layer` (0-based) instead of token embeddings.
  // config.json: "draft": {"kind": "edd", "target_layer": L}. -1: a plain
  // causal LM.
  int64_t edd_target_layer = -1;
  // config.json's architectures[0]; "" writes the family's causal LM. A
  // model of another class than "...ForCausalLM" (a reward model such as
  // Qwen2ForProcessRewardModel) has no LM head: its checkpoint holds none
  // and its own head reads the final hidden states.
  std::string architecture;

  // Derived.
  int64_t q_size() const { return num_attention_heads * head_dim; }
  int64_t kv_size() const { return num_key_value_heads * head_dim; }
  int64_t group_size() const { return num_attention_heads / num_key_value_heads; }
  int64_t num_parameters() const;  // counts tied embeddings once
  bool is_edd() const { return edd_target_layer >= 0; }
  bool has_lm_head() const;
  // The LM head's rows: draft_vocab_size when set, else vocab_size.
  int64_t head_rows() const { return draft_vocab_size > 0 ? draft_vocab_size : vocab_size; }
  // Qwen3: each head's q and k vectors are RMS-normed (weights q_norm and
  // k_norm of size head_dim, eps rms_norm_eps) before RoPE.
  bool has_qk_norm() const { return model_type == "qwen3"; }

  // Throws kInvalidArgument naming the field for an inconsistent shape
  // (a size not positive, kv heads not dividing heads, odd head_dim, unknown
  // model_type or rope_type). Requires num_key_value_heads and head_dim to be
  // filled in: from_json derives them, a config built in code must set them.
  void validate() const;

  // Parses config.json; `source` names the file in error messages. Unknown
  // keys are ignored (HF configs carry many) and null counts as absent; a
  // missing required key, a key of the wrong type, or an MLP seed does not
  // implement (hidden_act other than silu, mlp_bias true) is kInvalidArgument
  // naming the file and key. Calls validate().
  static ModelConfig from_json(const nlohmann::json& json, const std::string& source);
  // Reads and parses `path`: kNotFound if absent, kCorruption naming the file
  // (and line/column) if it is not valid JSON.
  static ModelConfig from_file(const std::string& path);

  nlohmann::json to_json() const;  // as Hugging Face writes config.json
  void save(const std::string& path) const;
};

}  // namespace seed::models
