// How paged attention's thread blocks (paged_attention_blocks.cuh) are
// laid out: the threads of a block, the tile of keys a block stages in
// shared memory (as many as fit what a block gets by default), and the
// grid of a forward's blocks. The includer provides __host__ and
// __device__, as for the block code: nvcc's, or the CPU test's emulation.
#pragma once

#include <cstddef>

#include "models/cuda/paged_attention_args.h"

namespace seed::models::cuda {

constexpr int kThreads = 128;
constexpr int kWarps = kThreads / 32;
constexpr int kMaxTileKeys = 32;            // the softmax step gives each lane of a warp one key
constexpr size_t kSharedBytes = 48 * 1024;  // what a block gets without opting in

// Shared memory, in floats, of a block staging tiles of `tile` keys of
// heads of `dim`.
__host__ __device__ inline int shared_floats(int dim, int tile) {
  return 2 * kRows * dim     // scaled queries, output accumulators
         + tile * (dim + 1)  // keys, rows one float apart: a warp's lanes read distinct banks
         + tile * dim        // values
         + kRows * tile      // scores, then softmax weights
         + 3 * kRows;        // per row: running maximum, running sum, this tile's rescale
}

// The blocks of a forward's attention: ((sequence, kv head), tile of query
// rows) x split, each staging `tile_keys` keys at a time in `shared_bytes`.
// The row tiles that read the same keys are neighbours, so that they run
// side by side and all but one find the keys in L2.
struct AttendGrid {
  int sequence_heads = 0, splits = 0, row_tiles = 0, tile_keys = 0;
  size_t shared_bytes = 0;
};

inline AttendGrid attend_grid(const PagedAttentionArgs& a) {
  AttendGrid g;
  g.sequence_heads = a.batch * a.kv_heads;
  g.splits = paged_attention_splits(a);
  g.row_tiles = row_tiles(a);
  g.tile_keys = kMaxTileKeys;  // the most within the default shared memory
  while (g.tile_keys > 1 && shared_floats(a.dim, g.tile_keys) * sizeof(float) > kSharedBytes) g.tile_keys /= 2;
  g.shared_bytes = shared_floats(a.dim, g.tile_keys) * sizeof(float);
  return g;
}

}  // namespace seed::models::cuda
