// Rotary position embeddings (RoPE) of CausalLM's ATen layers: the inverse
// frequencies a config asks for (rope_theta, linear or Llama-3 scaling),
// and the query and key heads of a fused projection rotated by per-row
// cos/sin tables. Internal to models/; pure functions of their arguments.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <utility>

#include "models/model_config.h"
#include "models/model_weights.h"

namespace seed::models {

// Rotary embedding frequencies, computed in float32 as Hugging Face does so
// that logits match its reference implementation.
at::Tensor rope_inverse_frequencies(const ModelConfig& c);

// The query and key heads of a fused projection qkv [M, (H + 2 Hkv) D] as
// [M, H + Hkv, D], RoPE applied; on a model with q/k norms (Qwen3) each head
// is RMS-normed first. cos and sin [M, 1, D/2] per row (apply_rope), or
// full-width [M, 1, D] as rope_rows_full() makes them: three kernels on a
// GPU where the half-width form takes seven.
at::Tensor rotated_qk(const at::Tensor& qkv, const DecoderLayerWeights& w, int64_t heads, int64_t kv_heads,
                      int64_t dim, double eps, const at::Tensor& cos, const at::Tensor& sin);

// Full-width RoPE rows for rotated_qk from half-width ones [M, 1, D/2]:
// cos | cos and -sin | sin.
std::pair<at::Tensor, at::Tensor> rope_rows_full(const at::Tensor& cos, const at::Tensor& sin);

}  // namespace seed::models
