// RMSNorm and rotary embedding, fused into one pass on CPU for inference.
//
// Why: at decode's shapes (one to a few rows of 192-4096 floats) the
// arithmetic is nothing and ATen's per-op cost (dispatch, an allocation per
// intermediate) is everything. RMSNorm is six ops and RoPE nine; on the zoo
// draft they were 30% of a decode step. CPU float32 tensors that need no
// gradient take a plain loop; everything else (CUDA, half precision,
// training under autograd) takes the ATen formula, so results agree to
// rounding either way. The loops also work on raw rows (the CPU forward's
// buffers, causal_lm_cpu.cpp).
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

namespace seed::models {

// x * rsqrt(mean(x^2, last dim) + eps) * weight. x [M, hidden], weight
// [hidden] (or any shape that broadcasts against x, off the GPU's fused
// kernel). Half-size x is normalised in float32.
at::Tensor rms_norm(const at::Tensor& x, const at::Tensor& weight, double eps);
// The same on `rows` rows of n floats; out is x itself (in place) or does
// not overlap it.
void rms_norm_rows(const float* x, int64_t rows, int64_t n, const float* weight, float eps, float* out);

// Rotate-half RoPE. x [M, heads, head_dim] whose rows may be strided (a view
// of a fused q/k/v projection) but whose heads are contiguous; cos and sin
// [M, 1, head_dim / 2]. Returns a new contiguous [M, heads, head_dim].
at::Tensor apply_rope(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin);
// The same in place: row m's head h at x + m * row_stride + h * dim; cos and
// sin [rows, dim / 2].
void rope_rows(float* x, int64_t rows, int64_t heads, int64_t dim, int64_t row_stride, const float* cos,
               const float* sin);

}  // namespace seed::models
