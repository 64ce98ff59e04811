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

// Which cached positions each query row attends to, in position order: the
// first prefix[m] positions of its sequence, found through the sequence's
// block table (position p at slot table[p / block_size] * block_size +
// p % block_size), then the slots extra[begin[m] .. begin[m + 1]) (a tree
// node's ancestors among the new tokens). Nothing here grows with the
// context but the block tables, which the cache holds anyway.
struct AttentionRows {
  int64_t block_size = 1;
  std::vector<const int32_t*> tables;  // per row; borrowed, must outlive the attention
  std::vector<int64_t> prefix;         // per row
  std::vector<int64_t> begin{0};
  std::vector<int64_t> extra;

  int64_t count() const { return static_cast<int64_t>(prefix.size()); }
  // Positions row m attends to.
  int64_t length(int64_t m) const { return prefix[m] + begin[m + 1] - begin[m]; }
  int64_t total_length() const;
  // Appends a row: `prefix` positions of `table`, then `extra_slots`.
  void add(const int32_t* table, int64_t prefix, const int64_t* extra_slots, int64_t extra_count);
  // out[0, n): the slots of row m's attended entries [first, first + n).
  void slots(int64_t m, int64_t first, int64_t n, int64_t* out) const;
};

// How the cache holds keys and values: float32, or bfloat16 (half the
// bytes a long context's attention reads; widened exactly as it is read).
enum class KvDtype { kFloat32, kBFloat16 };

struct PagedAttentionArgs {
  // Row m's query head h at q + m * q_stride + h * dim, RoPE applied.
  const float* q = nullptr;
  int64_t q_stride = 0;
  const void* keys = nullptr;    // [pool slots, kv_heads, dim] of kv_dtype, RoPE applied
  const void* values = nullptr;  // [pool slots, kv_heads, dim] of kv_dtype
  KvDtype kv_dtype = KvDtype::kFloat32;
  int64_t heads = 0, kv_heads = 0, dim = 0;
  const AttentionRows* rows = nullptr;
  float* out = nullptr;  // [rows, heads * dim]
};

// out = softmax(q k^T / sqrt(dim)) v for every row and query head; query
// head h reads kv head h / (heads / kv_heads). The keys and values are read
// in place, a fixed number of attended entries at a time with an online
// softmax (running maximum and sum), so the scratch memory is the same at
// any context; a row's result depends on its attended entries alone, never
// on where they sit in the pool or which rows are beside it. Successive
// rows of one block table (a verified chain, a tree, a prefill) read the
// prefix they share once for all of them. Splits rows and kv heads over the
// intra-op threads. REQUIRES every row to attend to a slot.
void paged_attention(CpuKernel kernel, const PagedAttentionArgs& args);

// out[0, n) = row[0, n) as `dtype` (bfloat16 rounded to nearest even):
// a new token's key or value written into the cache.
void store_kv_row(KvDtype dtype, const float* row, int64_t n, void* out);

// gate[i] = silu(gate[i]) * up[i] for i < n.
void silu_mul(CpuKernel kernel, float* gate, const float* up, int64_t n);

}  // namespace seed::models
