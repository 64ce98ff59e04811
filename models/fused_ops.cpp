#include "models/fused_ops.h"

#include <torch/torch.h>
#include <torch/version.h>

#include <cmath>

namespace seed::models {

namespace {

bool fusable(const at::Tensor& t) {
  return t.is_cpu() && t.scalar_type() == torch::kFloat && !t.requires_grad();
}

}  // namespace

void rms_norm_rows(const float* src, int64_t rows, int64_t n, const float* scale, float eps, float* dst) {
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
    const float inv = 1.0f / std::sqrt(sum / static_cast<float>(n) + eps);
    for (int64_t k = 0; k < n; ++k) dst[k] = src[k] * inv * scale[k];
  }
}

at::Tensor rms_norm(const at::Tensor& x, const at::Tensor& weight, double eps) {
  if (!fusable(x) || !fusable(weight) || x.dim() != 2) {
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
    // ATen's own (one kernel on a GPU, float32 sums) where the formula
    // below launches eight.
    if (!x.is_cpu() && weight.dim() == 1) return at::rms_norm(x, {weight.size(0)}, weight, eps);
#endif
    if (x.scalar_type() == torch::kFloat) return x * torch::rsqrt(x.pow(2).mean(-1, /*keepdim=*/true) + eps) * weight;
    // Half-size activations are normalised in float32 and rounded once, as
    // Hugging Face's RMSNorm does.
    const at::Tensor wide = x.to(torch::kFloat);
    return (wide * torch::rsqrt(wide.pow(2).mean(-1, /*keepdim=*/true) + eps)).to(x.scalar_type()) * weight;
  }
  const at::Tensor in = x.contiguous(), w = weight.contiguous();
  at::Tensor out = torch::empty_like(in);
  rms_norm_rows(in.data_ptr<float>(), in.size(0), in.size(1), w.data_ptr<float>(), static_cast<float>(eps),
                out.data_ptr<float>());
  return out;
}

void rope_rows(float* x, int64_t rows, int64_t heads, int64_t dim, int64_t row_stride, const float* cos,
               const float* sin) {
  const int64_t half = dim / 2;
  for (int64_t r = 0; r < rows; ++r) {
    const float* c = cos + r * half;
    const float* s = sin + r * half;
    for (int64_t h = 0; h < heads; ++h) {
      float* v = x + r * row_stride + h * dim;
      for (int64_t i = 0; i < half; ++i) {
        const float a = v[i], b = v[half + i];
        v[i] = a * c[i] - b * s[i];
        v[half + i] = b * c[i] + a * s[i];
      }
    }
  }
}

at::Tensor apply_rope(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin) {
  const int64_t half = x.size(-1) / 2;
  if (!fusable(x) || !fusable(cos) || !fusable(sin) || x.dim() != 3 || x.stride(2) != 1 ||
      x.stride(1) != x.size(2)) {
    at::Tensor x1 = x.narrow(-1, 0, half);
    at::Tensor x2 = x.narrow(-1, half, half);
    return torch::cat({x1 * cos - x2 * sin, x2 * cos + x1 * sin}, -1);
  }
  at::Tensor out = torch::empty({x.size(0), x.size(1), x.size(2)}, x.options());
  out.copy_(x);
  const at::Tensor c = cos.contiguous(), s = sin.contiguous();
  rope_rows(out.data_ptr<float>(), out.size(0), out.size(1), out.size(2), out.size(1) * out.size(2),
            c.data_ptr<float>(), s.data_ptr<float>());
  return out;
}

}  // namespace seed::models
