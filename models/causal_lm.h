// CausalLM: a Llama-family decoder (Llama 2/3, Mistral, Qwen2, Qwen3) in
// libtorch.
//
// RMSNorm, RoPE (rope_theta, linear or Llama-3 scaling), grouped-query
// attention, SwiGLU MLP, optional q/k/v bias, optional RMSNorm of each q and
// k head before RoPE, tied or untied embeddings.
// Runs on CPU (computing in float32 whatever the stored dtype) and on CUDA
// when libtorch has it (in the weights' dtype: bfloat16 for most folders).
//
// Two forwards:
//   forward()       appends new tokens of a batch of sequences to a KvCache
//                   and returns their logits; the new tokens of a sequence may
//                   form a chain or a token tree (speculative verification);
//   forward_full()  runs whole sequences without a cache, with autograd
//                   (training, and the reference the cached path is tested on).
// Tensor parallel (tp_shard.h): given a group in LoadOptions, the model holds
// one rank's shard and forward() runs the group's collectives; every rank
// of the group then calls forward() with the same batch, in the same order.
// Thread safety: forward() is const and may run concurrently from threads
// that each own their KvCache, on a whole model (a tensor-parallel group's
// collectives take one caller at a time); so one model, with one packed copy
// of its weights, serves several drafters (spec/drafters/model/draft_model_drafter.h).
// Everything else (forward_full, training through weights()): one caller.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "models/forward_input.h"
#include "models/kv_cache.h"
#include "models/load_options.h"
#include "models/model_config.h"
#include "models/model_weights.h"
#include "models/padded_batch.h"
#include "models/tp_collectives.h"
#include "models/tp_shard.h"

namespace seed::models {

class ForwardGraphs;  // forward_graphs.h

// The device a LoadOptions::device names: "cpu", "cuda" or "cuda:N".
// Throws kInvalidArgument naming it otherwise.
c10::Device parse_device(const std::string& device);

class CausalLM {
 public:
  // Loads a Hugging Face model folder (config.json + safetensors). Throws
  // seed::Error naming the file and the tensor/field at fault, or the field
  // the tp size does not divide (TpShard::of).
  static std::unique_ptr<CausalLM> load(const std::string& model_dir, const LoadOptions& options = {});
  // A model with random weights (deterministic in `seed`; a tp group's
  // ranks hold shards of the very weights a single process would make).
  static std::unique_ptr<CausalLM> random(const ModelConfig& config, uint64_t seed,
                                          const LoadOptions& options = {});
  // `weights` must be the shard of `tp_group`'s rank (whole when null).
  CausalLM(ModelConfig config, LlamaWeights weights, at::TensorOptions options,
           TpCollectives* tp_group = nullptr);
  ~CausalLM();

  const ModelConfig& config() const { return config_; }  // the whole model's
  const TpShard& shard() const { return shard_; }
  LlamaWeights& weights() { return weights_; }  // this rank's shard
  const LlamaWeights& weights() const { return weights_; }
  at::TensorOptions tensor_options() const { return options_; }
  // Whether forward() gives each row's outputs from that row alone (the
  // CPU layers), so a sequence's logits are the same bits alone or batched.
  bool rows_independent() const { return cpu_layers_; }
  // CUDA graphs captured so far (0 off CUDA or with LoadOptions::cuda_graphs off).
  int64_t captured_graphs() const;
  // Forwards so far that warmed up a CUDA graph rather than replay one
  // (ForwardGraphs::warm_ups; 0 where none are captured). Thread-safe.
  int64_t graph_warm_ups() const;
  // A KV cache matching this model's shape (this rank's kv heads) and
  // device, in its compute dtype; on CPU a model of bfloat16 matrices keeps
  // its keys and values in bfloat16 too (as transformers' bfloat16 run
  // does), halving what a long context's attention reads.
  KvCache make_cache(KvCacheOptions cache_options = {}) const;

  // Appends each input's tokens to its cache sequence (cache lengths grow by
  // S_b; a tree's nodes are stored in order, see KvCache::commit_path) and
  // returns logits (float32, on the model's device). The batch is packed:
  // projections and the MLP run on the sum of S_b rows, not B * S_max.
  // Full blocks of chain tokens are then published to the cache's prefix
  // table (KvCache::publish). A cache made with a hidden_layer also gets
  // each new token's hidden state after that layer.
  // Throws kOutOfRange if a position would pass max_position_embeddings, and
  // kInvalidArgument for an empty input, a bad parent or an out-of-vocab
  // token; on a throw the cache is unchanged. Every rank of a tp group gets
  // the whole logits.
  // kInvalidArgument for a model without an LM head (ModelConfig::has_lm_head).
  at::Tensor forward(const std::vector<SequenceInput>& batch, KvCache& cache, LogitsFor which) const;
  // forward() in the LM head's own columns: [rows, head rows] (float32),
  // column j scoring head_tokens()[j]; forward()'s logits where the head
  // scores every token. kLast or kTail only. A draft over part of the
  // vocabulary then spends nothing on the tokens it never proposes.
  at::Tensor forward_head(const std::vector<SequenceInput>& batch, KvCache& cache, LogitsFor which) const;
  // The tokens the LM head's rows score, ascending (int64, on the CPU),
  // when it scores a part of the vocabulary (ModelConfig::draft_vocab_size);
  // undefined when it scores every token.
  const at::Tensor& head_tokens() const { return head_tokens_host_; }
  // The LM head's row that scores `token`, or -1 where the head does not.
  int64_t head_row(int64_t token) const;
  // Logits in the head's columns [M, head rows] as forward() gives them,
  // [M, V]: -inf for the tokens the head does not score.
  at::Tensor vocabulary_logits(const at::Tensor& head_logits) const;
  // forward() up to the LM head: the final-normed hidden states (float32)
  // of the rows `which` selects, [rows, hidden_size], for a head of the
  // caller's own (a reward model's). kLast or kTail only.
  at::Tensor forward_hidden(const std::vector<SequenceInput>& batch, KvCache& cache, LogitsFor which) const;

  // tokens [B, T] (int64) -> logits [B, T, V], causal, positions 0..T-1, no
  // cache. Records autograd unless the caller disables it. Whole models
  // only (training): kInvalidArgument under tensor parallelism.
  // `matmul_dtype` (default: the weights' dtype) is the dtype of the matrix
  // products; kBFloat16 on float32 weights is mixed-precision training
  // (norms, the residual stream and the logits stay float32).
  // `hidden` (with hidden_layer >= 0) receives the output of that layer,
  // [B, T, hidden_size].
  at::Tensor forward_full(const at::Tensor& tokens, std::optional<c10::ScalarType> matmul_dtype = std::nullopt,
                          int64_t hidden_layer = -1, at::Tensor* hidden = nullptr);
  // Training on given input vectors: inputs [B, N, hidden_size] (token
  // embeddings from embed_rows(), a target's hidden states, or both),
  // RoPE positions [N], `allowed` [N, N] bool (row i may attend to column
  // j), the same for the whole batch. Returns the logits of rows
  // [logits_from, N): [B, N - logits_from, V]. Autograd as forward_full.
  at::Tensor forward_inputs(const at::Tensor& inputs, const at::Tensor& positions, const at::Tensor& allowed,
                            int64_t logits_from, std::optional<c10::ScalarType> matmul_dtype = std::nullopt);
  // tokens [B, T] -> their embeddings [B, T, hidden_size], with autograd.
  at::Tensor embed_rows(const at::Tensor& tokens);

  // A model of these weights whose LM head keeps the rows of `tokens`
  // alone (keep_head_rows: ascending ids, int64), so that it scores those
  // tokens only: a draft's reduced vocabulary. It shares every other
  // weight with this one. Whole models only: kInvalidArgument under tensor
  // parallelism, and as keep_head_rows.
  std::unique_ptr<CausalLM> with_head_rows(const at::Tensor& tokens) const;

  // Writes config.json and model.safetensors (in `dtype`) into `model_dir`.
  // Whole models only: kInvalidArgument under tensor parallelism.
  // Unset `dtype`: each tensor as held (say, half-size matrices and float32
  // norms, as LoadOptions::weights_dtype loads them).
  void save(const std::string& model_dir, std::optional<c10::ScalarType> dtype) const;

 private:
  struct Rope;
  // The three steps tensor parallelism changes; plain ops on a whole model.
  at::Tensor embed(const at::Tensor& tokens) const;    // [M] -> [M, hidden]
  at::Tensor sum_partial(at::Tensor partial) const;    // a row-parallel output -> the group's sum
  // [M, hidden] -> [M, head rows]: the group's columns gathered under
  // tensor parallelism.
  at::Tensor lm_head(const at::Tensor& hidden) const;
  // forward()'s work in the LM head's columns (forward_head): the layers
  // on either path, the head on plan.logit_rows, the cache published.
  at::Tensor head_forward(const std::vector<SequenceInput>& batch, const ForwardPlan& plan, KvCache& cache) const;
  void check_whole(const char* what) const;
  // forward()'s work on the CPU layers up to the LM head: embeds the
  // packed batch, runs the layers (writing the cache) and returns the
  // final-normed rows plan.logit_rows.
  at::Tensor cpu_final_hidden(const std::vector<SequenceInput>& batch, const ForwardPlan& plan,
                              KvCache& cache) const;
  // forward()'s work on the ATen layers (CUDA; CPU without fused layers)
  // over the padded batch: the logits (float32) of plan.logit_rows, or
  // with `logits` false their final-normed rows (float32). Through a CUDA
  // graph where it can.
  at::Tensor padded_forward(const std::vector<SequenceInput>& batch, const ForwardPlan& plan, KvCache& cache,
                            bool logits) const;
  // Whether attention of `seq` new rows a sequence reads the paged cache in
  // place (paged_attention) rather than gathering keys behind a mask.
  bool attends_paged(int64_t seq) const;
  // padded_forward's device work from the index data on the device; only
  // device work, so that it can be captured. `batch` for its soft prompts.
  at::Tensor padded_body(const at::Tensor& index, const PaddedBatch& padded, const std::vector<SequenceInput>& batch,
                         KvCache& cache, const at::Tensor& cos_table, const at::Tensor& sin_table,
                         bool logits) const;
  // The decoder layers over the embedded padded rows x [B*S, hidden]; cos
  // and sin [B*S, 1, head_dim] per row (full width). `bias` [B, 1,
  // group*S, T], the additive mask of the regrouped query rows, attends
  // over keys gathered by parts.key_slots; undefined, paged_attention()
  // reads them in place. Writes the new tokens' keys, values (and hidden
  // states) to the cache; returns x after the last layer.
  at::Tensor tensor_layers(at::Tensor x, const PaddedBatch& padded, const PaddedBatch::Parts& parts,
                           const at::Tensor& bias, KvCache& cache, const at::Tensor& cos,
                           const at::Tensor& sin) const;
  // The CPU layers over packed rows x [M, hidden]; cos and sin [M,
  // head_dim / 2]. Writes the cache as tensor_layers; returns the rows
  // plan.logit_rows of x after the last layer.
  at::Tensor cpu_layers(at::Tensor x, const ForwardPlan& plan, KvCache& cache, const at::Tensor& cos,
                        const at::Tensor& sin) const;
  // The decoder layers, norm and LM head over x [B*T, hidden] of B
  // sequences of T rows each (training): cos/sin per row, additive mask
  // [1, group*T, T]; logits of each sequence's rows [logits_from, T).
  at::Tensor full_layers(at::Tensor x, int64_t batch, const at::Tensor& cos, const at::Tensor& sin,
                         const at::Tensor& mask, c10::ScalarType matmul_dtype, int64_t logits_from,
                         int64_t hidden_layer, at::Tensor* hidden);

  ModelConfig config_;
  TpShard shard_;
  TpCollectives* tp_ = nullptr;  // null for a whole model; borrowed
  LlamaWeights weights_;
  at::Tensor head_tokens_host_;  // weights_.head_tokens on the CPU
  at::TensorOptions options_;
  bool cpu_layers_ = false;  // forward() takes cpu_layers()
  std::unique_ptr<Rope> rope_;
  std::unique_ptr<ForwardGraphs> graphs_;  // null: every forward eager
};

}  // namespace seed::models
