// The work of a cached forward's decoder layer on CPU besides its matrix
// products: attention read straight from the paged KV cache, and SwiGLU's
// activation. Compiled once per instruction set, as panel_gemm is, and
// chosen by the same CpuKernel.
//
// Why: at decode's shapes ATen's attention gathered every cached key and
// value into a new tensor per layer (O(context) copies a token), padded and
// masked the batch, and ran a dozen ops whose dispatch cost more than their
// arithmetic. Here each query row reads the slots it may see, in place, and
// its result depends on that row alone, never on the rest of the batch.
#pragma once

#include <cstdint>
#include <vector>

#include "models/cpu_kernel.h"

namespace seed::models {

// Which cached positions each query row attends to, as slots of the KV
// cache's pool: row m reads slots[begin[m] .. begin[m + 1]).
struct AttentionRows {
  std::vector<int64_t> begin{0};
  std::vector<int64_t> slots;

  int64_t count() const { return static_cast<int64_t>(begin.size()) - 1; }
};

struct PagedAttentionArgs {
  // Row m's query head h at q + m * q_stride + h * dim, RoPE applied.
  const float* q = nullptr;
  int64_t q_stride = 0;
  const float* keys = nullptr;    // [pool slots, kv_heads, dim], RoPE applied
  const float* values = nullptr;  // [pool slots, kv_heads, dim]
  int64_t heads = 0, kv_heads = 0, dim = 0;
  const AttentionRows* rows = nullptr;
  float* out = nullptr;  // [rows, heads * dim]
};

// out = softmax(q k^T / sqrt(dim)) v for every row and query head; query
// head h reads kv head h / (heads / kv_heads). Splits rows and kv heads
// over the intra-op threads. REQUIRES every row to attend to a slot.
void paged_attention(CpuKernel kernel, const PagedAttentionArgs& args);

// gate[i] = silu(gate[i]) * up[i] for i < n.
void silu_mul(CpuKernel kernel, float* gate, const float* up, int64_t n);

}  // namespace seed::models
