// The fused CPU RMSNorm and RoPE equal the ATen formulas they replace, which
// is the path CUDA tensors and training (autograd) still take.
#include "models/fused_ops.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

namespace seed::models {
namespace {

constexpr double kTolerance = 1e-6;  // fp32 rounding of a different summation order

at::Tensor randn(at::IntArrayRef shape, uint64_t seed) {
  at::Generator gen = at::detail::createCPUGenerator(seed);
  return torch::randn(shape, gen, torch::kFloat);
}

double max_diff(const at::Tensor& a, const at::Tensor& b) { return (a - b).abs().max().item<double>(); }

TEST(FusedOps, RmsNormEqualsTheAtenFormula) {
  for (int64_t hidden : {7, 8, 192, 389}) {  // with and without a tail past the 8 lanes
    const at::Tensor x = randn({5, hidden}, 1) * 3, weight = randn({hidden}, 2);
    const at::Tensor expected = x * torch::rsqrt(x.pow(2).mean(-1, true) + 1e-6) * weight;
    const at::Tensor fused = rms_norm(x, weight, 1e-6);
    EXPECT_TRUE(fused.is_contiguous());
    EXPECT_LT(max_diff(fused, expected), kTolerance) << "hidden " << hidden;
  }
}

TEST(FusedOps, RmsNormUnderAutogradKeepsTheGradient) {
  const at::Tensor x = randn({3, 16}, 3).requires_grad_(), weight = randn({16}, 4).requires_grad_();
  rms_norm(x, weight, 1e-6).sum().backward();
  ASSERT_TRUE(x.grad().defined());
  ASSERT_TRUE(weight.grad().defined());
  EXPECT_GT(weight.grad().abs().sum().item<double>(), 0);
}

TEST(FusedOps, RopeOnAStridedViewEqualsTheAtenFormula) {
  const int64_t rows = 4, heads = 3, dim = 8, half = dim / 2;
  // q and k heads as a view of a wider fused projection: rows are strided.
  const at::Tensor qkv = randn({rows, (heads + 2) * dim}, 5);
  const at::Tensor before = qkv.clone();
  const at::Tensor x = qkv.narrow(1, 0, heads * dim).view({rows, heads, dim});
  const at::Tensor cos = randn({rows, 1, half}, 6), sin = randn({rows, 1, half}, 7);
  const at::Tensor x1 = x.narrow(-1, 0, half), x2 = x.narrow(-1, half, half);
  const at::Tensor expected = torch::cat({x1 * cos - x2 * sin, x2 * cos + x1 * sin}, -1);
  const at::Tensor fused = apply_rope(x, cos, sin);
  EXPECT_TRUE(fused.is_contiguous());
  EXPECT_LT(max_diff(fused, expected), kTolerance);
  EXPECT_TRUE(torch::equal(qkv, before)) << "the input must not be modified";
}

}  // namespace
}  // namespace seed::models
