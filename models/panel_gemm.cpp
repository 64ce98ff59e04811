#include "models/panel_gemm.h"

#include <immintrin.h>

namespace seed::models {
namespace {

constexpr int64_t kRows = 4;                          // rows of x per tile
constexpr int64_t kLanes = 16;                        // floats per zmm
constexpr int64_t kVectors = kPanelWidth / kLanes;    // zmm per panel row

// rows x 64 block of y from `rows` rows of x and one panel [K, 64].
// Fully unrolled so that the rows x 4 accumulators live in registers.
template <int64_t rows>
__attribute__((target("avx512f"))) void tile(const float* x, int64_t K, const float* panel, const float* bias,
                                             float* y, int64_t ldy, const __mmask16 (&mask)[kVectors]) {
  __m512 acc[kRows][kVectors];
#pragma GCC unroll 4
  for (int64_t v = 0; v < kVectors; ++v) {
    const __m512 init = bias ? _mm512_maskz_loadu_ps(mask[v], bias + v * kLanes) : _mm512_setzero_ps();
#pragma GCC unroll 4
    for (int64_t r = 0; r < rows; ++r) acc[r][v] = init;
  }
  for (int64_t k = 0; k < K; ++k) {
    __m512 w[kVectors];
#pragma GCC unroll 4
    for (int64_t v = 0; v < kVectors; ++v) w[v] = _mm512_loadu_ps(panel + k * kPanelWidth + v * kLanes);
#pragma GCC unroll 4
    for (int64_t r = 0; r < rows; ++r) {
      const __m512 xr = _mm512_set1_ps(x[r * K + k]);
#pragma GCC unroll 4
      for (int64_t v = 0; v < kVectors; ++v) acc[r][v] = _mm512_fmadd_ps(xr, w[v], acc[r][v]);
    }
  }
#pragma GCC unroll 4
  for (int64_t r = 0; r < rows; ++r) {
#pragma GCC unroll 4
    for (int64_t v = 0; v < kVectors; ++v) _mm512_mask_storeu_ps(y + r * ldy + v * kLanes, mask[v], acc[r][v]);
  }
}

__mmask16 lane_mask(int64_t remaining) {
  if (remaining >= kLanes) return 0xFFFF;
  if (remaining <= 0) return 0;
  return static_cast<__mmask16>((1u << remaining) - 1);
}

}  // namespace

bool panel_gemm_supported() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f");
}

void panel_gemm(const float* x, const float* panels, const float* bias, float* y, int64_t M, int64_t K, int64_t N,
                int64_t panel_begin, int64_t panel_end) {
  for (int64_t p = panel_begin; p < panel_end; ++p) {
    const int64_t n = p * kPanelWidth;
    const float* panel = panels + p * K * kPanelWidth;
    __mmask16 mask[kVectors];
    for (int64_t v = 0; v < kVectors; ++v) mask[v] = lane_mask(N - n - v * kLanes);
    const float* b = bias ? bias + n : nullptr;
    int64_t m = 0;
    for (; m + kRows <= M; m += kRows) tile<kRows>(x + m * K, K, panel, b, y + m * N + n, N, mask);
    switch (M - m) {
      case 3: tile<3>(x + m * K, K, panel, b, y + m * N + n, N, mask); break;
      case 2: tile<2>(x + m * K, K, panel, b, y + m * N + n, N, mask); break;
      case 1: tile<1>(x + m * K, K, panel, b, y + m * N + n, N, mask); break;
      default: break;
    }
  }
}

}  // namespace seed::models
