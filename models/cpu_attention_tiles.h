// The inner loops of CPU paged attention (cpu_layer_kernels.cpp): a tile
// of readers (query heads of the rows attended together) goes through a
// chunk of cached key or value rows together, each row read and widened
// once for the tile, the tile's sums kept in registers. A reader's scores
// and output are the same bits in any tile. Built on cpu_vector_math.h,
// with its options. Internal to models/, included by cpu_layer_kernels.cpp
// alone; the readers point into scratch and output rows their caller owns.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "models/cpu_vector_math.h"
#include "models/cpu_vector_sums.h"

namespace seed::models {
// Unnamed, though in a header: cpu_layer_kernels.cpp alone includes it, and
// with external linkage here GCC inlined the kernels differently.
namespace {

// One query head of one row, as attention reads and writes it: its scaled
// query and its output row (both in the order the cache's rows are read),
// one chunk's scores (then weights), and its running maximum and sum.
struct Reader {
  const float* q;
  float* scores;  // [kChunk]
  float* top;
  float* sum;
  float* out;
};

// Readers of a chunk (its rows' query heads) that go through it together:
// each key and value row is read and widened once for them, and their sums
// stay in registers beside it. As many as the registers hold (32 zmm; 16
// ymm or xmm).
template <typename Vec>
constexpr int64_t kTile = kLanesOf<Vec> == 16 ? 4 : 2;

// Calls f(std::integral_constant<int64_t, n>) for 1 <= n <= R, so that a
// tile's loops over its readers are unrolled for its size.
template <int64_t R, typename F>
SEED_INLINE void with_tile_size(int64_t n, F&& f) {
  if constexpr (R > 1) {
    if (n < R) return with_tile_size<R - 1>(n, f);
  }
  f(std::integral_constant<int64_t, R>());
}

// tile[r].scores[j] = tile[r].q . keys[j] over dim entries for the R
// readers of a tile and j < c, and whatever in [c, the next multiple of
// L / kTile) (keys[j] must be readable there); the keys float32 rows or
// bfloat16 ones in lane order. L / kTile keys at a time, each loaded once for the tile: every
// reader's products summed lane-wise, then across lanes together. A score's
// sums are the same operations in the same order whatever its tile, so a
// reader's scores are the same bits in any tile. before(j, n) is called
// before keys [j, j + n) are read.
template <typename Vec, int64_t R, typename T, typename Before>
SEED_INLINE void tile_scores(const Reader* tile, const T* const* keys, int64_t c, int64_t dim, Before before) {
  constexpr int64_t L = kLanesOf<Vec>, J = L / kTile<Vec>;
  const float* q[R];
  float* scores[R];
  for (int64_t r = 0; r < R; ++r) {
    q[r] = tile[r].q;
    scores[r] = tile[r].scores;
  }
  const int64_t blocks = dim / (2 * L) * (2 * L), whole = dim / L * L;
  for (int64_t j0 = 0; j0 < c; j0 += J) {
    before(j0, J);
    Vec acc[L] = {};  // reader r's score of key j0 + j in acc[r * J + j]
    for (int64_t d = 0; d < blocks; d += 2 * L) {
      Vec q0[R], q1[R];
      for (int64_t r = 0; r < R; ++r) {
        q0[r] = load<Vec>(q[r] + d);
        q1[r] = load<Vec>(q[r] + d + L);
      }
      for (int64_t j = 0; j < J; ++j) {
        Vec k0, k1;
        load_block(keys[j0 + j] + d, k0, k1);
        for (int64_t r = 0; r < R; ++r) {
          acc[r * J + j] = fused(q0[r], k0, acc[r * J + j]);
          acc[r * J + j] = fused(q1[r], k1, acc[r * J + j]);
        }
      }
    }
    if (whole > blocks) {  // a last L entries, in order
      Vec qd[R];
      for (int64_t r = 0; r < R; ++r) qd[r] = load<Vec>(q[r] + blocks);
      for (int64_t j = 0; j < J; ++j) {
        const Vec k = load<Vec>(keys[j0 + j] + blocks);
        for (int64_t r = 0; r < R; ++r) acc[r * J + j] = fused(qd[r], k, acc[r * J + j]);
      }
    }
    const Vec sums = lane_sums(acc);
    for (int64_t r = 0; r < R; ++r) {
      for (int64_t j = 0; j < J; ++j) scores[r][j0 + j] = sums[r * J + j];
    }
    for (int64_t d = whole; d < dim; ++d) {  // a head size that is not a multiple of the lanes
      for (int64_t j = 0; j < J; ++j) {
        const float k = widen(keys[j0 + j][d]);
        for (int64_t r = 0; r < R; ++r) scores[r][j0 + j] = fused(q[r][d], k, scores[r][j0 + j]);
      }
    }
  }
}

// out[d, d + W) += sum over j of p[j] * (values + slots[j] * stride)[0, W)
// for each of the R readers of a tile (p its scores, out its output row), W
// a multiple of 16, the values float32
// rows or bfloat16 ones in lane order (W is whole blocks of 2L entries
// there, or a last L in order). Each value row is loaded once for the tile.
// The sums stay in registers across positions; written as plain loops, the
// compiler kept them in memory and chained every position's add through a
// store and a reload. An output entry's sum is the same operations in the
// same order whatever its tile and W.
template <typename Vec, int64_t W, int64_t R, typename T>
SEED_INLINE void tile_weighted_sum(const Reader* tile, int64_t d, const int64_t* slots, int64_t n,
                                   const T* __restrict values, int64_t stride) {
  constexpr int64_t kVectors = W / kLanesOf<Vec>;
  const float* p[R];
  float* out[R];
  for (int64_t r = 0; r < R; ++r) {
    p[r] = tile[r].scores;
    out[r] = tile[r].out + d;
  }
  Vec acc[R][kVectors];
  for (int64_t r = 0; r < R; ++r) std::memcpy(acc[r], out[r], sizeof acc[r]);
  for (int64_t j = 0; j < n; ++j) {
    const T* v = values + slots[j] * stride;
    if constexpr (kVectors == 1) {  // a last L entries, in order
      const Vec x = load<Vec>(v);
      for (int64_t r = 0; r < R; ++r) acc[r][0] = fused(splat<Vec>(p[r][j]), x, acc[r][0]);
    } else {
      for (int64_t i = 0; i < kVectors; i += 2) {
        Vec first, second;
        load_block(v + kLanesOf<Vec> * i, first, second);
        for (int64_t r = 0; r < R; ++r) {
          const Vec weight = splat<Vec>(p[r][j]);
          acc[r][i] = fused(weight, first, acc[r][i]);
          acc[r][i + 1] = fused(weight, second, acc[r][i + 1]);
        }
      }
    }
  }
  for (int64_t r = 0; r < R; ++r) std::memcpy(out[r], acc[r], sizeof acc[r]);
}

// Output entries per step of tile_weighted_sum: as many as a tile's sums
// keep in registers (32 zmm, 16 ymm or xmm).
template <typename Vec>
constexpr int64_t kWidest = kLanesOf<Vec> == 16 ? 64 : kLanesOf<Vec> == 8 ? 32 : 16;

}  // namespace
}  // namespace seed::models
