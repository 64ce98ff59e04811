// What paged attention's kernels read and write (paged_attention.cu), in
// plain types: no CUDA or torch header, so that the kernels' block code
// also runs in a CPU test (tests/models/paged_attention_blocks_test.cpp).
#pragma once

#include <cstdint>

// What both the host and the kernels compute.
#ifdef __CUDACC__
#define SEED_HOST_DEVICE __host__ __device__
#else
#define SEED_HOST_DEVICE
#endif

namespace seed::models::cuda {

// Key positions one thread block reads (a split; a forward's splits are
// combined at the end): kMaxSplitKeys, or fewer, down to kMinSplitKeys,
// where a forward has too few (sequence, kv head, row tile) blocks to keep
// every multiprocessor busy otherwise, as a lone sequence's decode step at
// a long context has (8 kv heads: 8 blocks a split).
constexpr int kMinSplitKeys = 64;
constexpr int kMaxSplitKeys = 256;
// Query rows of one kv head a block computes. Row r of a sequence's kv head
// is new row r / group's query head kv_head * group + r % group, so a
// decode step's group of heads shares one block and one read of the keys.
constexpr int kRows = 8;
// The widest head the kernels take (their tiles live in shared memory).
constexpr int kMaxHeadDim = 256;
// Elements a thread reads from the cache at once (16 bytes of bfloat16)
// where heads are a multiple of them and the pools aligned to 16 bytes
// (every published model's heads: 64, 80, 96, 128, 256); else one.
constexpr int kVectorElements = 8;

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
  int split_keys = kMaxSplitKeys;  // key positions a block reads: choose_split_keys()
  bool vector_loads = false;       // keys and values read kVectorElements at a time
  float scale = 1.0f;
};

// Tiles of kRows query rows a sequence's kv head has.
SEED_HOST_DEVICE inline int row_tiles(const PagedAttentionArgs& a) { return (a.heads / a.kv_heads * a.seq + kRows - 1) / kRows; }

// Blocks of a split: one per (sequence, kv head, tile of query rows).
inline int64_t blocks_per_split(const PagedAttentionArgs& a) {
  return static_cast<int64_t>(a.batch) * a.kv_heads * row_tiles(a);
}

// The split size for `a` on a GPU of `multiprocessors`: four blocks a
// multiprocessor at least, where the keys allow, so that some read keys
// while others compute; in whole tiles.
inline int choose_split_keys(const PagedAttentionArgs& a, int multiprocessors) {
  const int64_t wanted_splits = (4 * static_cast<int64_t>(multiprocessors) + blocks_per_split(a) - 1) / blocks_per_split(a);
  int64_t keys = (a.key_positions + wanted_splits - 1) / wanted_splits;
  keys = (keys + kMinSplitKeys - 1) / kMinSplitKeys * kMinSplitKeys;
  return static_cast<int>(keys < kMinSplitKeys ? kMinSplitKeys : keys > kMaxSplitKeys ? kMaxSplitKeys : keys);
}

inline int paged_attention_splits(const PagedAttentionArgs& a) {
  return (a.key_positions + a.split_keys - 1) / a.split_keys;
}

}  // namespace seed::models::cuda
