// panel_gemm on AVX2 + FMA (+ F16C for float16 weights), on panels 16
// columns wide: with 16 ymm registers a tile is up to 6 rows x 16 columns
// (12 accumulators, 2 of weights, 1 broadcast), and a panel streams
// contiguously. Tiles of 1-2 rows also split k into interleaved sums, so
// that at least 8 independent FMA chains hide the FMA latency.
#include <immintrin.h>

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

// acc[s][r][v] += x[r][k] * W[k][v] over k = s, s + splits, ... for one k.
template <int64_t rows, typename W>
SEED_AVX2 inline void step(const float* x, int64_t K, int64_t k, const W* panel, __m256 (&acc)[rows][kVectors]) {
  __m256 w[kVectors];
  load_row(panel + k * kWidth, w);
#pragma GCC unroll 6
  for (int64_t r = 0; r < rows; ++r) {
    const __m256 xr = _mm256_broadcast_ss(x + r * K + k);
#pragma GCC unroll 2
    for (int64_t v = 0; v < kVectors; ++v) acc[r][v] = _mm256_fmadd_ps(xr, w[v], acc[r][v]);
  }
}

// rows x 16 block of y from `rows` rows of x and one panel [K, 16], with k
// split into `splits` interleaved partial sums.
template <int64_t rows, int64_t splits, typename W>
SEED_AVX2 void tile(const float* x, int64_t K, const W* panel, const float* bias, float* y, int64_t ldy,
                    const __m256i (&mask)[kVectors]) {
  __m256 acc[splits][rows][kVectors];
  __m256 start[kVectors];
#pragma GCC unroll 2
  for (int64_t v = 0; v < kVectors; ++v) {
    start[v] = bias ? _mm256_maskload_ps(bias + v * kLanes, mask[v]) : _mm256_setzero_ps();
  }
  if constexpr (kSwizzled<W>) swap_halves(start);
#pragma GCC unroll 4
  for (int64_t s = 0; s < splits; ++s) {
#pragma GCC unroll 6
    for (int64_t r = 0; r < rows; ++r) {
#pragma GCC unroll 2
      for (int64_t v = 0; v < kVectors; ++v) acc[s][r][v] = s == 0 ? start[v] : _mm256_setzero_ps();
    }
  }
  int64_t k = 0;
  for (; k + splits <= K; k += splits) {
#pragma GCC unroll 4
    for (int64_t s = 0; s < splits; ++s) step<rows>(x, K, k + s, panel, acc[s]);
  }
  for (; k < K; ++k) step<rows>(x, K, k, panel, acc[0]);
#pragma GCC unroll 6
  for (int64_t r = 0; r < rows; ++r) {
    __m256 sum[kVectors];
#pragma GCC unroll 2
    for (int64_t v = 0; v < kVectors; ++v) {
      sum[v] = acc[0][r][v];
#pragma GCC unroll 4
      for (int64_t s = 1; s < splits; ++s) sum[v] = _mm256_add_ps(sum[v], acc[s][r][v]);
    }
    if constexpr (kSwizzled<W>) swap_halves(sum);
#pragma GCC unroll 2
    for (int64_t v = 0; v < kVectors; ++v) _mm256_maskstore_ps(y + r * ldy + v * kLanes, mask[v], sum[v]);
  }
}

SEED_AVX2 __m256i lane_mask(int64_t remaining) {
  const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const int32_t n = static_cast<int32_t>(remaining < 0 ? 0 : (remaining > kLanes ? kLanes : remaining));
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), lanes);
}

template <typename W>
SEED_AVX2 void run(const PanelGemmArgs& a) {
  const W* panels = static_cast<const W*>(a.panels);
  for (int64_t p = a.panel_begin; p < a.panel_end; ++p) {
    const int64_t n = p * kWidth;
    const W* panel = panels + p * a.K * kWidth;
    __m256i mask[kVectors];
    for (int64_t v = 0; v < kVectors; ++v) mask[v] = lane_mask(a.N - n - v * kLanes);
    const float* b = a.bias ? a.bias + n : nullptr;
    int64_t m = 0;
    for (; m + kMaxRows <= a.M; m += kMaxRows) tile<kMaxRows, 1>(a.x + m * a.K, a.K, panel, b, a.y + m * a.N + n, a.N, mask);
    const float* x = a.x + m * a.K;
    float* y = a.y + m * a.N + n;
    switch (a.M - m) {
      case 5: tile<5, 1>(x, a.K, panel, b, y, a.N, mask); break;
      case 4: tile<4, 1>(x, a.K, panel, b, y, a.N, mask); break;
      case 3: tile<3, 1>(x, a.K, panel, b, y, a.N, mask); break;
      case 2: tile<2, 2>(x, a.K, panel, b, y, a.N, mask); break;
      case 1: tile<1, 4>(x, a.K, panel, b, y, a.N, mask); break;
      default: break;
    }
  }
}

}  // namespace

void panel_gemm_avx2(const PanelGemmArgs& args) {
  with_weight_type(args.dtype, [&](auto weight) { run<decltype(weight)>(args); });
}

}  // namespace seed::models
