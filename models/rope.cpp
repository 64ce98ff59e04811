#include "models/rope.h"

#include <torch/torch.h>

#include <cmath>

#include "models/fused_ops.h"

namespace seed::models {

at::Tensor rope_inverse_frequencies(const ModelConfig& c) {
  const auto f32 = torch::TensorOptions().dtype(torch::kFloat);
  at::Tensor inv_freq =
      1.0 / torch::pow(c.rope_theta, torch::arange(0, c.head_dim, 2, f32) / static_cast<double>(c.head_dim));
  const RopeScaling& s = c.rope_scaling;
  if (s.rope_type == "linear") return inv_freq / s.factor;
  if (s.rope_type != "llama3") return inv_freq;
  // Llama 3.1: long wavelengths are slowed by `factor`, short ones kept, and
  // the band between is interpolated (HF _compute_llama3_parameters).
  const double old_len = static_cast<double>(s.original_max_position_embeddings);
  const double low_wavelen = old_len / s.low_freq_factor;
  const double high_wavelen = old_len / s.high_freq_factor;
  at::Tensor wavelen = 2 * M_PI / inv_freq;
  at::Tensor scaled = torch::where(wavelen > low_wavelen, inv_freq / s.factor, inv_freq);
  at::Tensor smooth = (old_len / wavelen - s.low_freq_factor) / (s.high_freq_factor - s.low_freq_factor);
  at::Tensor smoothed = (1 - smooth) * scaled / s.factor + smooth * scaled;
  at::Tensor medium = (wavelen >= high_wavelen) & (wavelen <= low_wavelen);
  return torch::where(medium, smoothed, scaled);
}

at::Tensor rotated_qk(const at::Tensor& qkv, const DecoderLayerWeights& w, int64_t heads, int64_t kv_heads,
                      int64_t dim, double eps, const at::Tensor& cos, const at::Tensor& sin) {
  const int64_t M = qkv.size(0);
  at::Tensor qk = qkv.narrow(1, 0, (heads + kv_heads) * dim).view({M, heads + kv_heads, dim});
  if (w.q_norm.defined()) {  // every head in one norm: q's weight on the first heads, k's on the rest
    const at::Tensor weight = torch::cat({w.q_norm.expand({heads, dim}), w.k_norm.expand({kv_heads, dim})});
    qk = rms_norm(qk, weight, eps);
  }
  if (cos.size(-1) != dim) return apply_rope(qk, cos, sin);
  // x cos + rotate_half(x) sin, rotate_half(x) = [-x2, x1]: the halves
  // swapped, and sin's first half negated in the table.
  const at::Tensor swapped = qk.view({M, heads + kv_heads, 2, dim / 2}).flip(2).view({M, heads + kv_heads, dim});
  return (qk * cos).addcmul_(swapped, sin);
}

std::pair<at::Tensor, at::Tensor> rope_rows_full(const at::Tensor& cos, const at::Tensor& sin) {
  return {torch::cat({cos, cos}, -1), torch::cat({-sin, sin}, -1)};
}

}  // namespace seed::models
