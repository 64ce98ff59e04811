// panel_gemm on AVX2 + FMA (+ F16C for float16 weights), on panels 16
// columns wide: with 16 ymm registers a tile is up to 6 rows x 16 columns
// (12 accumulators, 2 of weights, 1 broadcast), and a panel streams
// contiguously. Every tile sums k in order, so a row's outputs are the same
// bits whichever rows share its tile; tiles of 1-2 rows span 4 or 2 panels
// instead, so that 8 independent FMA chains hide the FMA latency.
#include <immintrin.h>

#include <algorithm>

#include "models/panel_gemm_kernels.h"

#define SEED_AVX2 __attribute__((target("avx2,fma,f16c")))

namespace seed::models {
namespace {

constexpr int64_t kWidth = 16;  // columns per panel (panel_width(kAvx2))
constexpr int64_t kMaxRows = 6;
constexpr int64_t kLanes = 8;   // floats per ymm
constexpr int64_t kVectors = kWidth / kLanes;

// A panel row's 16 weights widened to float32, in two vectors.
SEED_AVX2 inline void load_row(const float* w, __m256 (&out)[kVectors]) {
  out[0] = _mm256_loadu_ps(w);
  out[1] = _mm256_loadu_ps(w + kLanes);
}
SEED_AVX2 inline void load_row(const F16Bits* w, __m256 (&out)[kVectors]) {
  out[0] = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w)));
  out[1] = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w + kLanes)));
}
// bfloat16 is the top half of a float32: one load of the row, and zeros
// interleaved below each weight. The unpacks work within 128-bit lanes, so
// the vectors come out holding columns 0-3 and 8-11, then 4-7 and 12-15
// (kSwizzled); a tile swaps its accumulators' halves back once, at the end.
// Half the instructions of widening 8 weights at a time.
SEED_AVX2 inline void load_row(const Bf16Bits* w, __m256 (&out)[kVectors]) {
  const __m256i bits = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w));
  out[0] = _mm256_castsi256_ps(_mm256_unpacklo_epi16(_mm256_setzero_si256(), bits));
  out[1] = _mm256_castsi256_ps(_mm256_unpackhi_epi16(_mm256_setzero_si256(), bits));
}
template <typename W>
constexpr bool kSwizzled = false;
template <>
constexpr bool kSwizzled<Bf16Bits> = true;

// Columns 0-7 and 8-15 <-> 0-3 and 8-11, 4-7 and 12-15 (its own inverse).
SEED_AVX2 inline void swap_halves(__m256 (&v)[kVectors]) {
  const __m256 low = _mm256_permute2f128_ps(v[0], v[1], 0x20);
  v[1] = _mm256_permute2f128_ps(v[0], v[1], 0x31);
  v[0] = low;
}

// acc[r][v] += x[r][k] * W[k][v] for one k.
template <int64_t rows, typename W>
SEED_AVX2 inline void step(const float* x, int64_t K, int64_t k, const W* panel, __m256 (&acc)[rows][kVectors]) {
  prefetch_ahead<kWidth * sizeof(W)>(panel + k * kWidth);
  __m256 w[kVectors];
  load_row(panel + k * kWidth, w);
#pragma GCC unroll 6
  for (int64_t r = 0; r < rows; ++r) {
    const __m256 xr = _mm256_broadcast_ss(x + r * K + k);
#pragma GCC unroll 2
    for (int64_t v = 0; v < kVectors; ++v) acc[r][v] = _mm256_fmadd_ps(xr, w[v], acc[r][v]);
  }
}

SEED_AVX2 __m256i lane_mask(int64_t remaining) {
  const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const int32_t n = static_cast<int32_t>(remaining < 0 ? 0 : (remaining > kLanes ? kLanes : remaining));
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), lanes);
}

// Rows [m, m + rows) of y in the columns of panels [p, p + panels), from
// the bias (or zero) and k = 0, 1, ... in order.
template <int64_t rows, int64_t panels, typename W>
SEED_AVX2 void tile(const PanelGemmArgs& a, int64_t m, int64_t p) {
  const W* panel = static_cast<const W*>(a.panels) + p * a.K * kWidth;
  const float* x = a.x + m * a.K;
  __m256i mask[panels][kVectors];
  __m256 acc[panels][rows][kVectors];
#pragma GCC unroll 4
  for (int64_t q = 0; q < panels; ++q) {
    const int64_t n = (p + q) * kWidth;
    __m256 start[kVectors];
#pragma GCC unroll 2
    for (int64_t v = 0; v < kVectors; ++v) {
      mask[q][v] = lane_mask(a.N - n - v * kLanes);
      start[v] = a.bias ? _mm256_maskload_ps(a.bias + n + v * kLanes, mask[q][v]) : _mm256_setzero_ps();
    }
    if constexpr (kSwizzled<W>) swap_halves(start);
#pragma GCC unroll 6
    for (int64_t r = 0; r < rows; ++r) {
#pragma GCC unroll 2
      for (int64_t v = 0; v < kVectors; ++v) acc[q][r][v] = start[v];
    }
  }
  for (int64_t k = 0; k < a.K; ++k) {
#pragma GCC unroll 4
    for (int64_t q = 0; q < panels; ++q) step<rows>(x, a.K, k, panel + q * a.K * kWidth, acc[q]);
  }
#pragma GCC unroll 4
  for (int64_t q = 0; q < panels; ++q) {
    float* y = a.y + m * a.N + (p + q) * kWidth;
#pragma GCC unroll 6
    for (int64_t r = 0; r < rows; ++r) {
      if constexpr (kSwizzled<W>) swap_halves(acc[q][r]);
#pragma GCC unroll 2
      for (int64_t v = 0; v < kVectors; ++v) _mm256_maskstore_ps(y + r * a.N + v * kLanes, mask[q][v], acc[q][r][v]);
    }
  }
}

// Rows [m, m + rows) (1 or 2) in `count` panels from p: 4 / rows panels a
// tile where there are that many.
template <int64_t rows, typename W>
SEED_AVX2 void few_rows(const PanelGemmArgs& a, int64_t m, int64_t p, int64_t count) {
  constexpr int64_t wide = 4 / rows;
  for (; count >= wide; count -= wide, p += wide) tile<rows, wide, W>(a, m, p);
  for (; count > 0; --count, ++p) tile<rows, 1, W>(a, m, p);
}

template <typename W>
SEED_AVX2 void run(const PanelGemmArgs& a) {
  // The last 1-2 rows go across panels; 3-5 make a tile of their own.
  const int64_t few = a.M % kMaxRows <= 2 ? a.M % kMaxRows : 0, tiled = a.M - few;
  // Panels a step: those of one tile of the last 1-2 rows, which the tiles
  // of 3-6 rows before it leave cached.
  const int64_t group = few == 1 ? 4 : 2;
  for (int64_t p = a.panel_begin; p < a.panel_end; p += group) {
    const int64_t count = std::min(group, a.panel_end - p);
    for (int64_t q = p; q < p + count; ++q) {
      int64_t m = 0;
      for (; m + kMaxRows <= tiled; m += kMaxRows) tile<kMaxRows, 1, W>(a, m, q);
      switch (tiled - m) {
        case 5: tile<5, 1, W>(a, m, q); break;
        case 4: tile<4, 1, W>(a, m, q); break;
        case 3: tile<3, 1, W>(a, m, q); break;
        default: break;
      }
    }
    if (few == 1) few_rows<1, W>(a, tiled, p, count);
    if (few == 2) few_rows<2, W>(a, tiled, p, count);
  }
}

}  // namespace

void panel_gemm_avx2(const PanelGemmArgs& args) {
  with_weight_type(args.dtype, [&](auto weight) { run<decltype(weight)>(args); });
}

}  // namespace seed::models
