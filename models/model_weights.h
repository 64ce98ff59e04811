// LlamaWeights: the parameters of a Llama-family decoder, and their files.
//
// In memory, q/k/v are fused into one [q + 2 kv, hidden] projection and
// gate/up into one [2 intermediate, hidden] projection (one GEMM each instead
// of three and two); on disk they keep Hugging Face's names and shapes, so
// load and save map one to one onto model folders users download. Tensor
// parallelism (parallel/) reshards this struct after loading; models/ knows
// nothing of ranks.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

#include "models/model_config.h"
#include "models/safetensors.h"

namespace seed::models {

// y = x W^T + b over rows x [M, in] -> [M, out].
struct Linear {
  at::Tensor weight;    // [out, in], the parameter (Hugging Face layout)
  at::Tensor bias;      // [out], or undefined
  at::Tensor weight_t;  // [in, out] contiguous copy, CPU inference only (see prepare)

  at::Tensor operator()(const at::Tensor& x) const;
  // CPU: keeps a transposed copy as well. OpenBLAS is fastest on [out, in]
  // for one row (gemv) but up to 8x slower than on [in, out] for 2-16 rows
  // (measured, docs/benchmarks.md); verification of drafts lives at 2-16 rows.
  // Costs one more copy of the weights in memory, not in bandwidth: each
  // forward reads one of the two. Call again after the weights change.
  void prepare_for_inference();
};

struct DecoderLayerWeights {
  at::Tensor input_norm;  // [hidden]
  Linear qkv;             // [q + 2 kv, hidden], bias for Qwen2
  Linear o;               // [hidden, q]
  at::Tensor post_norm;   // [hidden]
  Linear gate_up;         // [2 intermediate, hidden]
  Linear down;            // [hidden, intermediate]
};

struct LlamaWeights {
  at::Tensor embed;  // [vocab, hidden]
  std::vector<DecoderLayerWeights> layers;
  at::Tensor norm;   // [hidden]
  Linear lm_head;    // [vocab, hidden]; shares `embed` when tied

  void prepare_for_inference();
  int64_t parameter_bytes() const;  // bytes a forward reads (tied once, no copies)
  std::vector<at::Tensor> parameters();  // unique trainable tensors
};

// Reads every tensor of `config` from `checkpoint`, checking each shape, and
// converts to `options` (dtype, device). kNotFound/kCorruption name the tensor.
LlamaWeights load_weights(const Checkpoint& checkpoint, const ModelConfig& config,
                          at::TensorOptions options);

// Random weights, N(0, 0.02) projections and norms near 1, deterministic
// in `seed`: for tests and as the trainer's initialisation.
LlamaWeights random_weights(const ModelConfig& config, uint64_t seed, at::TensorOptions options);

// The weights under Hugging Face names and shapes, as CPU tensors in `dtype`.
NamedTensors to_named_tensors(const LlamaWeights& weights, const ModelConfig& config,
                              c10::ScalarType dtype);

}  // namespace seed::models
