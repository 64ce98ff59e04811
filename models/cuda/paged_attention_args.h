// What paged attention's kernels read and write (paged_attention.cu), in
// plain types: no CUDA or torch header, so that the kernels' block code
// also runs in a CPU test (tests/models/paged_attention_blocks_test.cpp).
#pragma once

#include <cstdint>

namespace seed::models::cuda {

// One forward's attention of B sequences of S new rows (a padded batch,
// padded_batch.h), each reading its keys where the cache holds them.
struct PagedAttentionArgs {
  const void* q = nullptr;  // row r, head h at q + r * q_row_stride + h * dim; rows b*S + i
  int64_t q_row_stride = 0;
  const void* keys = nullptr;  // [slots, kv_heads, dim]: the cache's pool of one layer
  const void* values = nullptr;
  const int64_t* key_slots = nullptr;  // [B, key_positions]: slot of each sequence's position p
  const int64_t* cached = nullptr;     // [B]: positions cached before the forward
  const int64_t* tree = nullptr;       // [B, S, S]: 1 where new row i attends to new position j
  void* out = nullptr;                 // [B*S, heads * dim]
  // Per split of the key positions, each (row, head)'s unnormalised output
  // [splits, B*S*heads, dim], running maximum and sum [splits, B*S*heads];
  // unused with one split.
  float* split_out = nullptr;
  float* split_max = nullptr;
  float* split_sum = nullptr;
  int batch = 0, seq = 0, key_positions = 0, heads = 0, kv_heads = 0, dim = 0;
  float scale = 1.0f;
};

// Key positions one thread block reads: a forward has
// ceil(key_positions / kSplitKeys) splits, combined at the end.
constexpr int kSplitKeys = 256;
// The widest head the kernels take (their tiles live in shared memory).
constexpr int kMaxHeadDim = 256;

inline int paged_attention_splits(int key_positions) { return (key_positions + kSplitKeys - 1) / kSplitKeys; }

}  // namespace seed::models::cuda
