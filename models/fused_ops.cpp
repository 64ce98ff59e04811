#include "models/fused_ops.h"

#include <torch/torch.h>

#include <cmath>

namespace seed::models {

namespace {

bool fusable(const at::Tensor& t) {
  return t.is_cpu() && t.scalar_type() == torch::kFloat && !t.requires_grad();
}

}  // namespace

at::Tensor rms_norm(const at::Tensor& x, const at::Tensor& weight, double eps) {
  if (!fusable(x) || !fusable(weight) || x.dim() != 2) {
    return x * torch::rsqrt(x.pow(2).mean(-1, /*keepdim=*/true) + eps) * weight;
  }
  const at::Tensor in = x.contiguous(), w = weight.contiguous();
  const int64_t rows = in.size(0), n = in.size(1);
  at::Tensor out = torch::empty_like(in);
  const float* src = in.data_ptr<float>();
  const float* scale = w.data_ptr<float>();
  float* dst = out.data_ptr<float>();
  for (int64_t r = 0; r < rows; ++r, src += n, dst += n) {
    // Eight partial sums, so that the compiler vectorises the reduction.
    float partial[8] = {};
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
      for (int64_t j = 0; j < 8; ++j) partial[j] += src[i + j] * src[i + j];
    }
    float sum = 0;
    for (; i < n; ++i) sum += src[i] * src[i];
    for (float p : partial) sum += p;
    const float inv = 1.0f / std::sqrt(sum / static_cast<float>(n) + static_cast<float>(eps));
    for (int64_t k = 0; k < n; ++k) dst[k] = src[k] * inv * scale[k];
  }
  return out;
}

at::Tensor apply_rope(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin) {
  const int64_t half = x.size(-1) / 2;
  if (!fusable(x) || !fusable(cos) || !fusable(sin) || x.dim() != 3 || x.stride(2) != 1 ||
      x.stride(1) != x.size(2)) {
    at::Tensor x1 = x.narrow(-1, 0, half);
    at::Tensor x2 = x.narrow(-1, half, half);
    return torch::cat({x1 * cos - x2 * sin, x2 * cos + x1 * sin}, -1);
  }
  const at::Tensor c = cos.contiguous(), s = sin.contiguous();
  const int64_t rows = x.size(0), heads = x.size(1), dim = x.size(2), row_stride = x.stride(0);
  at::Tensor out = torch::empty({rows, heads, dim}, x.options());
  const float* src = x.data_ptr<float>();
  float* dst = out.data_ptr<float>();
  for (int64_t r = 0; r < rows; ++r) {
    const float* cr = c.data_ptr<float>() + r * half;
    const float* sr = s.data_ptr<float>() + r * half;
    for (int64_t h = 0; h < heads; ++h) {
      const float* in = src + r * row_stride + h * dim;
      float* o = dst + (r * heads + h) * dim;
      for (int64_t i = 0; i < half; ++i) {
        o[i] = in[i] * cr[i] - in[half + i] * sr[i];
        o[half + i] = in[half + i] * cr[i] + in[i] * sr[i];
      }
    }
  }
  return out;
}

}  // namespace seed::models
