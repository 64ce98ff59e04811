// CausalLM::cpu_layers: forward()'s decoder layers on CPU as plain loops over
// float32 buffers. The matrix products run in panel_gemm, attention reads
// the paged cache in place (cpu_layer_kernels.h), and the norms, RoPE,
// SwiGLU and residual adds between them are loops over the same buffers.
//
// Why: the ATen layers ran about thirty ops a layer, each with its dispatch
// and an allocation, and gathered the whole cached context per layer; at a
// decode step's one to sixteen rows that overhead was as large as the matrix
// products themselves. Each row's result here depends on that row alone, so
// a token's logits are the same bits whether it is decoded alone, verified in
// a chain or in a tree, or batched with other sequences.
#include <cstdint>
#include <torch/torch.h>

#include <cstring>
#include <vector>

#include "models/base/error.h"
#include "models/causal_lm.h"
#include "models/cpu_layer_kernels.h"
#include "models/forward_plan.h"
#include "models/fused_ops.h"

namespace seed::models {

namespace {

// For each row, the cache positions it attends to in position order: a
// chain row its sequence's positions up to its own (read through the block
// table), a tree node the cached prefix and then its ancestors and itself.
AttentionRows attention_rows(const ForwardPlan& plan) {
  AttentionRows rows;
  rows.block_size = plan.block_size;
  std::vector<int64_t> attended, extra;
  for (int64_t r = 0; r < plan.rows; ++r) {
    const int64_t b = plan.sequence[r];
    plan.attended_new_positions(r, attended);
    // How many of the attended new positions follow the prefix without a gap.
    int64_t contiguous = 0;
    while (contiguous < static_cast<int64_t>(attended.size()) && attended[contiguous] == plan.cached[b] + contiguous) {
      ++contiguous;
    }
    extra.clear();
    for (size_t i = contiguous; i < attended.size(); ++i) extra.push_back(plan.slot(b, attended[i]));
    rows.add(plan.blocks[b].data(), plan.cached[b] + contiguous, extra.data(), static_cast<int64_t>(extra.size()));
  }
  return rows;
}

}  // namespace

at::Tensor CausalLM::cpu_layers(at::Tensor x, const ForwardPlan& plan, KvCache& cache, const at::Tensor& cos,
                                const at::Tensor& sin) const {
  const ModelConfig& c = config_;
  int64_t M = plan.rows;  // rows still computed (see the last layer)
  const int64_t E = c.hidden_size, H = shard_.heads, Hkv = shard_.kv_heads, D = c.head_dim;
  const int64_t qkv_width = (H + 2 * Hkv) * D, kv_width = Hkv * D;
  const int64_t inter = weights_.layers.empty() ? 0 : weights_.layers[0].gate.out_features();  // this rank's
  AttentionRows rows = attention_rows(plan);
  const CpuKernel kernel = weights_.cpu_kernel;
  const float eps = static_cast<float>(c.rms_norm_eps);
  const float* cos_rows = cos.data_ptr<float>();
  const float* sin_rows = sin.data_ptr<float>();
  const c10::ScalarType kv_type = cache.keys(0).scalar_type();
  SEED_CHECK(kv_type == torch::kFloat || kv_type == torch::kBFloat16, kInvalidArgument)
      << "the CPU layers read a KV cache of float32 or bfloat16, not " << kv_type;
  const KvDtype kv_dtype = kv_type == torch::kBFloat16 ? KvDtype::kBFloat16 : KvDtype::kFloat32;

  x = x.contiguous();
  float* residual = x.data_ptr<float>();
  // One buffer for every intermediate of a layer, reused by each layer.
  std::vector<float> buffer(M * (2 * E + qkv_width + H * D + 2 * inter));
  float* normed = buffer.data();             // [M, E]
  float* qkv = normed + M * E;               // [M, qkv_width]: q, k, v of each row
  float* attended = qkv + M * qkv_width;     // [M, H * D]
  float* projected = attended + M * H * D;   // [M, E]
  float* gate = projected + M * E;           // [M, inter]
  float* up = gate + M * inter;              // [M, inter]
  // residual += a row-parallel product, summed over the tp group first.
  const auto add_to_residual = [&](float* partial) {
    if (tp_) {
      at::Tensor whole = torch::from_blob(partial, {M, E}, x.options());
      tp_->all_reduce_sum(whole);
    }
    for (int64_t i = 0; i < M * E; ++i) residual[i] += partial[i];
  };

  for (int64_t l = 0; l < c.num_hidden_layers; ++l) {
    const DecoderLayerWeights& w = weights_.layers[l];
    rms_norm_rows(residual, M, E, w.input_norm.data_ptr<float>(), eps, normed);
    w.qkv.apply(normed, M, qkv);
    if (w.q_norm.defined()) {  // Qwen3: each q and k head RMS-normed, in place
      for (int64_t m = 0; m < M; ++m) {
        float* q = qkv + m * qkv_width;
        rms_norm_rows(q, H, D, w.q_norm.data_ptr<float>(), eps, q);
        rms_norm_rows(q + H * D, Hkv, D, w.k_norm.data_ptr<float>(), eps, q + H * D);
      }
    }
    rope_rows(qkv, M, H + Hkv, D, qkv_width, cos_rows, sin_rows);  // q and k heads
    const at::Tensor layer_keys = cache.keys(l), layer_values = cache.values(l);
    auto* keys = static_cast<char*>(layer_keys.data_ptr());
    auto* values = static_cast<char*>(layer_values.data_ptr());
    const int64_t kv_row_bytes = kv_width * static_cast<int64_t>(layer_keys.element_size());
    for (int64_t m = 0; m < M; ++m) {
      const float* row = qkv + m * qkv_width + H * D;
      store_kv_row(kv_dtype, row, kv_width, keys + plan.write_slots[m] * kv_row_bytes);
      store_kv_row(kv_dtype, row + kv_width, kv_width, values + plan.write_slots[m] * kv_row_bytes);
    }
    // Past its keys and values, the last layer matters only at the rows
    // whose logits are returned (a prompt's last row, not an EDD's
    // hidden-state rows), unless the cache keeps this layer's output.
    const int64_t kept = static_cast<int64_t>(plan.logit_rows.size());
    if (l == c.num_hidden_layers - 1 && l != cache.hidden_layer() && kept < M) {
      at::Tensor out = torch::empty({kept, E}, x.options());
      AttentionRows kept_rows;
      kept_rows.block_size = rows.block_size;
      for (int64_t i = 0; i < kept; ++i) {
        const int64_t r = plan.logit_rows[i];  // ascending, so r >= i: moving rows forward is safe
        std::memcpy(out.data_ptr<float>() + i * E, residual + r * E, E * sizeof(float));
        std::memmove(qkv + i * qkv_width, qkv + r * qkv_width, qkv_width * sizeof(float));
        kept_rows.add(rows.tables[r], rows.prefix[r], rows.extra.data() + rows.begin[r], rows.begin[r + 1] - rows.begin[r]);
      }
      x = out;
      residual = x.data_ptr<float>();
      rows = std::move(kept_rows);
      M = kept;
    }
    PagedAttentionArgs attention;
    attention.q = qkv;
    attention.q_stride = qkv_width;
    attention.keys = keys;
    attention.values = values;
    attention.kv_dtype = kv_dtype;
    attention.heads = H;
    attention.kv_heads = Hkv;
    attention.dim = D;
    attention.rows = &rows;
    attention.out = attended;
    paged_attention(kernel, attention);
    w.o.apply(attended, M, projected);
    add_to_residual(projected);

    rms_norm_rows(residual, M, E, w.post_norm.data_ptr<float>(), eps, normed);
    w.gate.apply(normed, M, gate);
    w.up.apply(normed, M, up);
    silu_mul(kernel, gate, up, M * inter);
    w.down.apply(gate, M, projected);
    add_to_residual(projected);
    if (l == cache.hidden_layer()) {
      float* hidden = cache.hidden_states().data_ptr<float>();
      for (int64_t m = 0; m < M; ++m) {
        std::memcpy(hidden + plan.write_slots[m] * E, residual + m * E, E * sizeof(float));
      }
    }
  }
  if (M != static_cast<int64_t>(plan.logit_rows.size())) {
    x = x.index_select(0, torch::tensor(plan.logit_rows, torch::TensorOptions().dtype(torch::kLong)));
  }
  return x;
}

}  // namespace seed::models
