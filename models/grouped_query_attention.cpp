#include "models/grouped_query_attention.h"

#include <torch/torch.h>
#include <torch/version.h>

#include <cmath>
#include <limits>
#include <vector>

namespace seed::models {

float mask_value(c10::ScalarType dtype) {
  switch (dtype) {
    case torch::kHalf: return -65504.0f;
    case torch::kBFloat16: return -3.38e38f;
    default: return std::numeric_limits<float>::lowest();
  }
}

at::Tensor attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& bias) {
  const int64_t batch = k.size(0), kv_heads = k.size(2), dim = k.size(3);
  const int64_t heads = q.size(1), group = heads / kv_heads, seq = q.size(0) / batch;
  at::Tensor qg = q.view({batch, seq, kv_heads, group, dim}).permute({0, 2, 3, 1, 4});
  qg = qg.reshape({batch, kv_heads, group * seq, dim});
  const at::Tensor kt = k.permute({0, 2, 1, 3}), vt = v.permute({0, 2, 1, 3});  // [B, Hkv, T, D]
#if TORCH_VERSION_MAJOR >= 2
  // One fused kernel (softmax in float32) in place of five.
  at::Tensor out = at::scaled_dot_product_attention(qg, kt, vt, bias);  // [B, Hkv, G*S, D]
#else
  at::Tensor scores = torch::matmul(qg, kt.transpose(2, 3)).mul_(1.0 / std::sqrt(static_cast<double>(dim)));
  scores.add_(bias);
  at::Tensor out = torch::matmul(torch::softmax(scores, -1), vt);  // [B, Hkv, G*S, D]
#endif
  return out.view({batch, kv_heads, group, seq, dim}).permute({0, 3, 1, 2, 4}).reshape({batch * seq, heads * dim});
}

at::Tensor masked_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& mask) {
  const int64_t batch = k.size(0), seq = k.size(1), kv_heads = k.size(2), dim = k.size(3);
  const int64_t heads = q.size(1), group = heads / kv_heads;
  const double scale = 1.0 / std::sqrt(static_cast<double>(dim));
  std::vector<at::Tensor> outs;
  outs.reserve(batch);
  for (int64_t b = 0; b < batch; ++b) {
    const at::Tensor qb =  // [Hkv, G*T, D]: query head h reads kv head h / G
        q.narrow(0, b * seq, seq).view({seq, kv_heads, group, dim}).permute({1, 2, 0, 3}).reshape(
            {kv_heads, group * seq, dim});
    const at::Tensor scores = torch::baddbmm(mask, qb, k[b].permute({1, 2, 0}), 1.0, scale);  // [Hkv, G*T, T]
    const at::Tensor out = torch::bmm(torch::softmax(scores, -1), v[b].permute({1, 0, 2}));  // [Hkv, G*T, D]
    outs.push_back(out.view({kv_heads, group, seq, dim}).permute({2, 0, 1, 3}).reshape({seq, heads * dim}));
  }
  return torch::cat(outs, 0);
}

at::Tensor causal_mask(int64_t seq, int64_t group, const at::TensorOptions& options) {
  const float masked = mask_value(options.dtype().toScalarType());
  return torch::full({seq, seq}, masked, options).triu(1).repeat({group, 1}).unsqueeze(0);
}

}  // namespace seed::models
