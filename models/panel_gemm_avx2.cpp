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

// 8 weights widened to float32.
SEED_AVX2 inline __m256 load8(const float* w) { return _mm256_loadu_ps(w); }
SEED_AVX2 inline __m256 load8(const Bf16Bits* w) {
  // bfloat16 is the top half of a float32: shift the bits up.
  const __m256i wide = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w)));
  return _mm256_castsi256_ps(_mm256_slli_epi32(wide, 16));
}
SEED_AVX2 inline __m256 load8(const F16Bits* w) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w)));
}

// acc[s][r][v] += x[r][k] * W[k][v] over k = s, s + splits, ... for one k.
template <int64_t rows, typename W>
SEED_AVX2 inline void step(const float* x, int64_t K, int64_t k, const W* panel, __m256 (&acc)[rows][kVectors]) {
  __m256 w[kVectors];
#pragma GCC unroll 2
  for (int64_t v = 0; v < kVectors; ++v) w[v] = load8(panel + k * kWidth + v * kLanes);
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
#pragma GCC unroll 4
  for (int64_t s = 0; s < splits; ++s) {
#pragma GCC unroll 6
    for (int64_t r = 0; r < rows; ++r) {
#pragma GCC unroll 2
      for (int64_t v = 0; v < kVectors; ++v) {
        acc[s][r][v] = s == 0 && bias ? _mm256_maskload_ps(bias + v * kLanes, mask[v]) : _mm256_setzero_ps();
      }
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
#pragma GCC unroll 2
    for (int64_t v = 0; v < kVectors; ++v) {
      __m256 sum = acc[0][r][v];
#pragma GCC unroll 4
      for (int64_t s = 1; s < splits; ++s) sum = _mm256_add_ps(sum, acc[s][r][v]);
      _mm256_maskstore_ps(y + r * ldy + v * kLanes, mask[v], sum);
    }
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
