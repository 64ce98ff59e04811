// CausalLM: a Llama-family decoder (Llama 2/3, Mistral, Qwen2) in libtorch.
//
// RMSNorm, RoPE (rope_theta, linear or Llama-3 scaling), grouped-query
// attention, SwiGLU MLP, optional q/k/v bias, tied or untied embeddings.
// Runs on CPU (computing in float32 whatever the stored dtype) and on CUDA
// when libtorch has it.
//
// Two forwards:
//   forward()       appends new tokens of a batch of sequences to a KvCache
//                   and returns their logits; the new tokens of a sequence may
//                   form a chain or a token tree (speculative verification);
//   forward_full()  runs whole sequences without a cache, with autograd
//                   (training, and the reference the cached path is tested on).
// Not thread-safe: one caller at a time (weights are read-only, but the
// RoPE table grows lazily).
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "models/kv_cache.h"
#include "models/model_config.h"
#include "models/model_weights.h"

namespace seed::models {

struct LoadOptions {
  // Where the model computes. The launcher decides this (WorldConfig), never
  // the library: "cpu" or "cuda:N".
  std::string device = "cpu";
};

// The new tokens one sequence contributes to a batched forward.
struct SequenceInput {
  SequenceId sequence = 0;      // cache sequence the tokens extend
  std::vector<int32_t> tokens;  // new tokens, at least one
  // Empty: a chain (token i follows token i-1). Otherwise a token tree in
  // topological order: parents[i] is -1 (a child of the cached prefix) or an
  // index < i. Node i sits at RoPE position length + depth(i) and attends to
  // the cached prefix and to its ancestors; its logits equal those of running
  // its root-to-node path alone.
  std::vector<int32_t> parents;
};

enum class LogitsFor {
  kAll,   // [B, S_max, V]: row s of sequence b is its token s (padding past S_b)
  kLast,  // [B, V]: the last new token of each sequence
};

class CausalLM {
 public:
  // Loads a Hugging Face model folder (config.json + safetensors). Throws
  // seed::Error naming the file and the tensor/field at fault.
  static std::unique_ptr<CausalLM> load(const std::string& model_dir, const LoadOptions& options = {});
  // A model with random weights (deterministic in `seed`).
  static std::unique_ptr<CausalLM> random(const ModelConfig& config, uint64_t seed,
                                          const LoadOptions& options = {});
  CausalLM(ModelConfig config, LlamaWeights weights, at::TensorOptions options);
  ~CausalLM();

  const ModelConfig& config() const { return config_; }
  LlamaWeights& weights() { return weights_; }
  at::TensorOptions tensor_options() const { return options_; }
  // A KV cache matching this model's shape, dtype and device.
  KvCache make_cache(KvCacheOptions cache_options = {}) const;

  // Appends each input's tokens to its cache sequence (cache lengths grow by
  // S_b; a tree's nodes are stored in order, see KvCache::commit_path) and
  // returns logits (float32, on the model's device).
  // Throws kOutOfRange if a position would pass max_position_embeddings, and
  // kInvalidArgument for an empty input, a bad parent or an out-of-vocab
  // token; on a throw the cache is unchanged.
  at::Tensor forward(const std::vector<SequenceInput>& batch, KvCache& cache, LogitsFor which);

  // tokens [B, T] (int64) -> logits [B, T, V], causal, positions 0..T-1, no
  // cache. Records autograd unless the caller disables it.
  at::Tensor forward_full(const at::Tensor& tokens);

  // Writes config.json and model.safetensors (in `dtype`) into `model_dir`.
  void save(const std::string& model_dir, c10::ScalarType dtype) const;

 private:
  struct Rope;
  ModelConfig config_;
  LlamaWeights weights_;
  at::TensorOptions options_;
  std::unique_ptr<Rope> rope_;
};

}  // namespace seed::models
