// LlamaWeights: the parameters of a Llama-family decoder, and their files.
//
// In memory, q/k/v are fused into one [q + 2 kv, hidden] projection (one
// GEMM instead of three; its outputs are used as views). gate and up stay
// apart: SwiGLU reads them element-wise, and halves of a fused output would
// be strided, which made silu and mul 3x slower (measured). On disk the
// weights keep Hugging Face's names and shapes, so
// load and save map one to one onto model folders users download. Under
// tensor parallelism the struct holds one rank's shard (tp_shard.h): the
// same fields with fewer rows or columns.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

#include "models/model_config.h"
#include "models/safetensors.h"
#include "models/tp_shard.h"

namespace seed::models {

// y = x W^T + b over rows x [M, in] -> [M, out].
struct Linear {
  at::Tensor weight;    // [out, in], the parameter (Hugging Face layout)
  at::Tensor bias;      // [out], or undefined
  // CPU float32 inference only (see prepare_for_inference), one of:
  at::Tensor panels;    // [ceil(out / 64), in, 64] for panel_gemm (AVX-512)
  at::Tensor weight_t;  // [in, out] contiguous for BLAS (other CPUs)

  at::Tensor operator()(const at::Tensor& x) const;
  // CPU float32: packs the weight for panel_gemm (AVX-512), which beats every
  // BLAS call at the 1-16 rows decoding and verification multiply; on other
  // CPUs keeps a [in, out] copy, on which OpenBLAS is fastest for 2+ rows
  // (for one row it is fastest on [out, in]). Either way one more copy of
  // the weights in memory, not in bandwidth: a forward reads one of them.
  // Must be called again after the weights change (training).
  void prepare_for_inference();
};

struct DecoderLayerWeights {
  at::Tensor input_norm;  // [hidden]
  Linear qkv;             // [q + 2 kv, hidden], bias for Qwen2
  Linear o;               // [hidden, q]
  at::Tensor post_norm;   // [hidden]
  Linear gate;            // [intermediate, hidden]
  Linear up;              // [intermediate, hidden]
  Linear down;            // [hidden, intermediate]
};

struct LlamaWeights {
  at::Tensor embed;  // [vocab, hidden]
  std::vector<DecoderLayerWeights> layers;
  at::Tensor norm;   // [hidden]
  Linear lm_head;    // [vocab, hidden]; shares `embed` when tied

  void prepare_for_inference();
  int64_t parameter_bytes() const;  // bytes a forward reads (tied once, no copies)
  std::vector<at::Tensor> parameters() const;  // one tensor per distinct parameter
};

// Reads every tensor of `config` from `checkpoint`, checking each shape,
// keeps the rows/columns of `shard` (TpShard::whole(config): all of them)
// and converts to `options` (dtype, device). Tensors are read, cut and
// dropped one at a time, so a rank holds at most its shard plus one whole
// tensor. kNotFound/kCorruption name the tensor.
LlamaWeights load_weights(const Checkpoint& checkpoint, const ModelConfig& config,
                          at::TensorOptions options, const TpShard& shard);

// The whole model's weights `full` cut down to `shard`, on `options`: a
// tensor-parallel rank's share of weights built in memory (random ones).
LlamaWeights shard_weights(const LlamaWeights& full, const ModelConfig& config, const TpShard& shard,
                           at::TensorOptions options);

// Random weights, N(0, 0.02) projections and norms near 1, deterministic
// in `seed`: for tests and as the trainer's initialisation.
LlamaWeights random_weights(const ModelConfig& config, uint64_t seed, at::TensorOptions options);

// The weights under Hugging Face names and shapes, as CPU tensors in `dtype`.
NamedTensors to_named_tensors(const LlamaWeights& weights, const ModelConfig& config,
                              c10::ScalarType dtype);

}  // namespace seed::models
