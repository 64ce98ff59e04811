// The thread blocks of paged attention (paged_attention.cu): each
// sequence's keys and values are read where the KV cache holds them,
// through the padded batch's slot table, with no gathered copy and no mask
// tensor; positions past a sequence's cached and new tokens are never read,
// so a CUDA graph's key positions padded to its bucket cost nothing.
//
// The split of FlashDecoding: a block takes one sequence's kv head, up to
// kRows of its query rows and one split of its key positions (shorter
// where a forward has few blocks: choose_split_keys), and keeps a running
// softmax over tiles of keys staged in shared memory; a second
// kernel weighs the splits' results by their softmax sums. Scores, softmax
// and sums are float32 whatever the cache's dtype.
//
// The includer provides, before this header, CUDA's block primitives
// (threadIdx, blockIdx, gridDim, __syncthreads, __shfl_xor_sync, and the
// __device__ qualifiers) and, for each element type T, `float load(const
// T*)`, `void store(T*, float)` and `void load_vector(const T* p, float*
// out)`, which reads kVectorElements elements from p, 16-byte aligned:
// nvcc's for the kernels, an emulation of them for the CPU test.
#pragma once

#include <cmath>
#include <cstdint>

#include "models/cuda/paged_attention_args.h"
#include "models/cuda/paged_attention_grid.cuh"

namespace seed::models::cuda {

__host__ __device__ inline int64_t lesser(int64_t a, int64_t b) { return a < b ? a : b; }

// Block (blockIdx.x = (sequence * kv_heads + kv head) * row_tiles + tile of
// query rows, blockIdx.y = split) of an attend_grid() launch of kThreads
// threads; `shared` holds shared_floats(dim, tile) floats. With one split
// it writes the rows' outputs, else its split's share for combine_split().
template <typename T>
__device__ void attend_split(const PagedAttentionArgs& a, int tile, float* shared) {
  const int D = a.dim, group = a.heads / a.kv_heads;
  const int tiles = row_tiles(a), sequence_head = blockIdx.x / tiles;
  const int b = sequence_head / a.kv_heads, kv_head = sequence_head % a.kv_heads;
  const int split = blockIdx.y, first = blockIdx.x % tiles * kRows;
  const int rows = static_cast<int>(lesser(kRows, group * a.seq - first));
  float* q = shared;
  float* acc = q + kRows * D;
  float* k_tile = acc + kRows * D;
  float* v_tile = k_tile + tile * (D + 1);
  float* weight = v_tile + tile * D;
  float* row_max = weight + kRows * tile;
  float* row_sum = row_max + kRows;
  float* rescale = row_sum + kRows;

  const T* Q = static_cast<const T*>(a.q);
  const T* K = static_cast<const T*>(a.keys);
  const T* V = static_cast<const T*>(a.values);
  const int64_t cached = a.cached[b];
  // No row attends past its sequence's cached and new positions.
  const int64_t end = lesser(a.key_positions, cached + a.seq);
  const int64_t begin = static_cast<int64_t>(split) * a.split_keys, stop = lesser(end, begin + a.split_keys);
  const int64_t* slots = a.key_slots + static_cast<int64_t>(b) * a.key_positions;
  const int64_t* tree = a.tree + static_cast<int64_t>(b) * a.seq * a.seq;

  for (int i = threadIdx.x; i < rows * D; i += kThreads) {
    const int r = first + i / D, d = i % D;
    const int64_t row = static_cast<int64_t>(b) * a.seq + r / group;
    const int head = kv_head * group + r % group;
    q[i] = load(Q + row * a.q_row_stride + static_cast<int64_t>(head) * D + d) * a.scale;
    acc[i] = 0.0f;
  }
  if (threadIdx.x < kRows) {
    row_max[threadIdx.x] = -INFINITY;
    row_sum[threadIdx.x] = 0.0f;
  }
  __syncthreads();

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  for (int64_t from = begin; from < stop; from += tile) {
    const int n = static_cast<int>(lesser(tile, stop - from));
    if (a.vector_loads) {
      const int pieces = D / kVectorElements;  // of a key row
      for (int i = threadIdx.x; i < n * pieces; i += kThreads) {
        const int k = i / pieces, d = i % pieces * kVectorElements;
        const int64_t at = (slots[from + k] * a.kv_heads + kv_head) * D + d;
        float key[kVectorElements], value[kVectorElements];
        load_vector(K + at, key);
        load_vector(V + at, value);
        for (int j = 0; j < kVectorElements; ++j) {
          k_tile[k * (D + 1) + d + j] = key[j];
          v_tile[k * D + d + j] = value[j];
        }
      }
    } else {
      for (int i = threadIdx.x; i < n * D; i += kThreads) {
        const int k = i / D, d = i % D;
        const int64_t at = (slots[from + k] * a.kv_heads + kv_head) * D + d;
        k_tile[k * (D + 1) + d] = load(K + at);
        v_tile[k * D + d] = load(V + at);
      }
    }
    __syncthreads();
    for (int i = threadIdx.x; i < rows * tile; i += kThreads) {
      const int r = i / tile, k = i % tile;
      const int64_t position = from + k;
      const int64_t new_row = (first + r) / group;
      float score = -INFINITY;
      if (k < n && (position < cached || tree[new_row * a.seq + (position - cached)] != 0)) {
        const float* qr = q + r * D;
        const float* kr = k_tile + k * (D + 1);
        score = 0.0f;
        for (int d = 0; d < D; ++d) score += qr[d] * kr[d];
      }
      weight[i] = score;
    }
    __syncthreads();
    for (int r = warp; r < rows; r += kWarps) {
      const float score = lane < tile ? weight[r * tile + lane] : -INFINITY;
      float tile_max = score;
      for (int o = 16; o > 0; o /= 2) tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, o));
      const float old_max = row_max[r], new_max = fmaxf(old_max, tile_max);
      // A row that has attended to nothing yet keeps -inf: never exp(-inf + inf).
      const float w = new_max == -INFINITY ? 0.0f : expf(score - new_max);
      float sum = w;
      for (int o = 16; o > 0; o /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, o);
      if (lane < tile) weight[r * tile + lane] = w;
      if (lane == 0) {
        const float old_weight = new_max == -INFINITY ? 1.0f : expf(old_max - new_max);
        rescale[r] = old_weight;
        row_sum[r] = row_sum[r] * old_weight + sum;
        row_max[r] = new_max;
      }
    }
    __syncthreads();
    for (int i = threadIdx.x; i < rows * D; i += kThreads) {
      const int r = i / D, d = i % D;
      const float* w = weight + r * tile;
      float x = acc[i] * rescale[r];
      for (int k = 0; k < n; ++k) x += w[k] * v_tile[k * D + d];
      acc[i] = x;
    }
    __syncthreads();
  }

  // Every row attends to its own position, so one split's sums are positive;
  // a split past a sequence's end leaves (-inf, 0) for combine_split.
  const int64_t row_heads = static_cast<int64_t>(a.batch) * a.seq * a.heads;
  for (int i = threadIdx.x; i < rows * D; i += kThreads) {
    const int r = i / D, d = i % D;
    const int64_t row = static_cast<int64_t>(b) * a.seq + (first + r) / group;
    const int64_t row_head = row * a.heads + kv_head * group + (first + r) % group;
    if (gridDim.y == 1) {
      store(static_cast<T*>(a.out) + row_head * D + d, acc[i] / row_sum[r]);
      continue;
    }
    const int64_t at = split * row_heads + row_head;
    a.split_out[at * D + d] = acc[i];
    if (d == 0) {
      a.split_max[at] = row_max[r];
      a.split_sum[at] = row_sum[r];
    }
  }
}

// Block blockIdx.x = row * heads + head of kThreads threads, after every
// split's attend_split: the splits' outputs weighed by exp(their maximum -
// the overall one), over the weighed sums.
template <typename T>
__device__ void combine_split(const PagedAttentionArgs& a, int splits) {
  const int64_t row_heads = static_cast<int64_t>(a.batch) * a.seq * a.heads;
  const int64_t row_head = blockIdx.x;
  float overall = -INFINITY;
  for (int s = 0; s < splits; ++s) overall = fmaxf(overall, a.split_max[s * row_heads + row_head]);
  float sum = 0.0f;
  for (int s = 0; s < splits; ++s) {
    const float m = a.split_max[s * row_heads + row_head];
    if (m != -INFINITY) sum += expf(m - overall) * a.split_sum[s * row_heads + row_head];
  }
  for (int d = threadIdx.x; d < a.dim; d += kThreads) {
    float x = 0.0f;
    for (int s = 0; s < splits; ++s) {
      const int64_t at = s * row_heads + row_head;
      const float m = a.split_max[at];
      if (m != -INFINITY) x += expf(m - overall) * a.split_out[at * a.dim + d];
    }
    store(static_cast<T*>(a.out) + row_head * a.dim + d, x / sum);
  }
}

}  // namespace seed::models::cuda
