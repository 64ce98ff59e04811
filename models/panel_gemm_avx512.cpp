// panel_gemm on AVX-512F: tiles of up to 6 rows x one 64-column panel, 24
// zmm accumulators + 4 of weights + 1 broadcast of the 32 registers, so up to
// 6 verification rows cost one pass over the weights.
//
// bfloat16 weights sit in panels of k pairs (pack_panels), and there are two
// ways to multiply them. kAvx512 widens each pair to two float32 vectors (a
// shift and a mask, one instruction per 16 weights) and multiplies them by
// float32 rows with FMAs. kAvx512Bf16 (AVX512_BF16) multiplies the pairs as
// they are with vdpbf16ps, two k an instruction, by rows rounded to bfloat16
// first (as GPU inference of a bfloat16 model does); products and sums stay
// float32. Once the weights sit in cache, a verification forward of several
// rows is bound by multiply-adds, not bytes: which way does more of them a
// second depends on the core (best_cpu_kernel).
#include <cstdint>
#include <immintrin.h>

#include <cstring>
#include <type_traits>
#include <vector>

#include "models/panel_gemm_kernels.h"

// GCC 12's avx512fintrin.h builds masked intrinsics from an "undefined"
// vector it then flags as maybe-uninitialized; the warning is about the header.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#define SEED_AVX512 __attribute__((target("avx512f")))
#define SEED_AVX512_BF16 __attribute__((target("avx512f,avx512bf16")))

namespace seed::models {
namespace {

constexpr int64_t kWidth = 64;                      // columns per panel (panel_width(kAvx512))
constexpr int64_t kMaxRows = 6;                     // rows of x per tile
constexpr int64_t kLanes = 16;                      // floats per zmm
constexpr int64_t kVectors = kWidth / kLanes;  // zmm per panel row

// 16 weights of a panel of rows, widened to float32.
SEED_AVX512 inline __m512 load16(const float* w) { return _mm512_loadu_ps(w); }
SEED_AVX512 inline __m512 load16(const F16Bits* w) {
  return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(w)));
}

// A tile's accumulators start at the bias (or zero) and end in y.
template <int64_t rows>
SEED_AVX512 inline void start_tile(__m512 (&acc)[rows][kVectors], const float* bias,
                                   const __mmask16 (&mask)[kVectors]) {
#pragma GCC unroll 4
  for (int64_t v = 0; v < kVectors; ++v) {
    const __m512 init = bias ? _mm512_maskz_loadu_ps(mask[v], bias + v * kLanes) : _mm512_setzero_ps();
#pragma GCC unroll 6
    for (int64_t r = 0; r < rows; ++r) acc[r][v] = init;
  }
}

template <int64_t rows>
SEED_AVX512 inline void store_tile(const __m512 (&acc)[rows][kVectors], float* y, int64_t ldy,
                                   const __mmask16 (&mask)[kVectors]) {
#pragma GCC unroll 6
  for (int64_t r = 0; r < rows; ++r) {
#pragma GCC unroll 4
    for (int64_t v = 0; v < kVectors; ++v) _mm512_mask_storeu_ps(y + r * ldy + v * kLanes, mask[v], acc[r][v]);
  }
}

// acc[r][v] += x[r * ldx] * w[v] for each row r of the tile.
template <int64_t rows>
SEED_AVX512 inline void multiply_add(__m512 (&acc)[rows][kVectors], const float* x, int64_t ldx,
                                     const __m512 (&w)[kVectors]) {
#pragma GCC unroll 6
  for (int64_t r = 0; r < rows; ++r) {
    const __m512 xr = _mm512_set1_ps(x[r * ldx]);
#pragma GCC unroll 4
    for (int64_t v = 0; v < kVectors; ++v) acc[r][v] = _mm512_fmadd_ps(xr, w[v], acc[r][v]);
  }
}

// rows x 64 block of y from `rows` rows of x and one panel [K, 64].
// Fully unrolled so that the rows x 4 accumulators live in registers.
template <int64_t rows, typename W>
SEED_AVX512 void tile(const float* x, int64_t K, const W* panel, const float* bias, float* y, int64_t ldy,
                      const __mmask16 (&mask)[kVectors]) {
  __m512 acc[rows][kVectors];
  start_tile(acc, bias, mask);
  for (int64_t k = 0; k < K; ++k) {
    prefetch_ahead<kWidth * sizeof(W)>(panel + k * kWidth);
    __m512 w[kVectors];
#pragma GCC unroll 4
    for (int64_t v = 0; v < kVectors; ++v) w[v] = load16(panel + k * kWidth + v * kLanes);
    multiply_add(acc, x + k, K, w);
  }
  store_tile(acc, y, ldy, mask);
}

// tile() from a panel of bfloat16 k pairs (pack_panels): each 32-bit word
// holds one column's (w[2p][c], w[2p + 1][c]), and a bfloat16 is the top
// half of a float32, so the word shifted up 16 bits is w[2p][c] as a
// float32 and the word with its low half cleared is w[2p + 1][c]. The
// products and their order are tile<float>'s on the same values.
template <int64_t rows>
SEED_AVX512 void tile_widened_pairs(const float* x, int64_t K, const Bf16Bits* panel, const float* bias, float* y,
                                    int64_t ldy, const __mmask16 (&mask)[kVectors]) {
  __m512 acc[rows][kVectors];
  start_tile(acc, bias, mask);
  const __m512i high_half = _mm512_set1_epi32(static_cast<int>(0xFFFF0000u));
  const int64_t k_pairs = (K + 1) / 2;
  for (int64_t p = 0; p < k_pairs; ++p) {
    const Bf16Bits* pairs = panel + p * kWidth * 2;
    prefetch_ahead<kWidth * 2 * sizeof(Bf16Bits)>(pairs);
    __m512 w[kVectors];
#pragma GCC unroll 4
    for (int64_t v = 0; v < kVectors; ++v) {
      w[v] = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_loadu_si512(pairs + v * kLanes * 2), 16));
    }
    multiply_add(acc, x + 2 * p, K, w);
    if (2 * p + 1 == K) break;  // an odd K's last pair is padding
#pragma GCC unroll 4
    for (int64_t v = 0; v < kVectors; ++v) {
      w[v] = _mm512_castsi512_ps(_mm512_and_si512(_mm512_loadu_si512(pairs + v * kLanes * 2), high_half));
    }
    multiply_add(acc, x + 2 * p + 1, K, w);
  }
  store_tile(acc, y, ldy, mask);
}

// tile() with vdpbf16ps, on a panel of bfloat16 k pairs. x_pairs: each row
// of x as bfloat16, two per 32-bit word (k_pairs words a row, the last one
// padded with zero when K is odd).
template <int64_t rows>
SEED_AVX512_BF16 void tile_bf16_products(const uint32_t* x_pairs, int64_t k_pairs, const Bf16Bits* panel,
                                         const float* bias, float* y, int64_t ldy, const __mmask16 (&mask)[kVectors]) {
  __m512 acc[rows][kVectors];
  start_tile(acc, bias, mask);
  for (int64_t p = 0; p < k_pairs; ++p) {
    prefetch_ahead<kWidth * 2 * sizeof(Bf16Bits)>(panel + p * kWidth * 2);
    __m512i w[kVectors];  // 16 columns' (w[2p][c], w[2p + 1][c]) each
#pragma GCC unroll 4
    for (int64_t v = 0; v < kVectors; ++v) w[v] = _mm512_loadu_si512(panel + (p * kWidth + v * kLanes) * 2);
#pragma GCC unroll 6
    for (int64_t r = 0; r < rows; ++r) {
      const __m512bh xr = reinterpret_cast<__m512bh>(_mm512_set1_epi32(static_cast<int>(x_pairs[r * k_pairs + p])));
#pragma GCC unroll 4
      for (int64_t v = 0; v < kVectors; ++v) {
        acc[r][v] = _mm512_dpbf16_ps(acc[r][v], xr, reinterpret_cast<__m512bh>(w[v]));
      }
    }
  }
  store_tile(acc, y, ldy, mask);
}

__mmask16 lane_mask(int64_t remaining) {
  if (remaining >= kLanes) return 0xFFFF;
  if (remaining <= 0) return 0;
  return static_cast<__mmask16>((1u << remaining) - 1);
}

// Calls tile(rows, p, m, bias, mask) for each block of y that one tile
// computes: rows x 64 columns (panel p) from row m, rows an
// std::integral_constant, kMaxRows and then the rest.
template <typename Tile>
void for_each_tile(const PanelGemmArgs& a, Tile&& tile) {
  for (int64_t p = a.panel_begin; p < a.panel_end; ++p) {
    const int64_t n = p * kWidth;
    __mmask16 mask[kVectors];
    for (int64_t v = 0; v < kVectors; ++v) mask[v] = lane_mask(a.N - n - v * kLanes);
    const float* bias = a.bias ? a.bias + n : nullptr;
    int64_t m = 0;
    for (; m + kMaxRows <= a.M; m += kMaxRows) tile(std::integral_constant<int64_t, kMaxRows>{}, p, m, bias, mask);
    switch (a.M - m) {
      case 5: tile(std::integral_constant<int64_t, 5>{}, p, m, bias, mask); break;
      case 4: tile(std::integral_constant<int64_t, 4>{}, p, m, bias, mask); break;
      case 3: tile(std::integral_constant<int64_t, 3>{}, p, m, bias, mask); break;
      case 2: tile(std::integral_constant<int64_t, 2>{}, p, m, bias, mask); break;
      case 1: tile(std::integral_constant<int64_t, 1>{}, p, m, bias, mask); break;
      default: break;
    }
  }
}

// Panels of rows: float32 or float16 weights.
template <typename W>
void run_rows(const PanelGemmArgs& a) {
  const W* panels = static_cast<const W*>(a.panels);
  for_each_tile(a, [&](auto rows, int64_t p, int64_t m, const float* bias, const __mmask16(&mask)[kVectors]) {
    tile<decltype(rows)::value>(a.x + m * a.K, a.K, panels + p * a.K * kWidth, bias, a.y + m * a.N + p * kWidth, a.N,
                                mask);
  });
}

void run_widened_pairs(const PanelGemmArgs& a) {
  const int64_t panel_elements = (a.K + 1) / 2 * 2 * kWidth;
  const Bf16Bits* panels = static_cast<const Bf16Bits*>(a.panels);
  for_each_tile(a, [&](auto rows, int64_t p, int64_t m, const float* bias, const __mmask16(&mask)[kVectors]) {
    tile_widened_pairs<decltype(rows)::value>(a.x + m * a.K, a.K, panels + p * panel_elements, bias,
                                              a.y + m * a.N + p * kWidth, a.N, mask);
  });
}

}  // namespace

SEED_AVX512_BF16 void round_rows_to_bf16_pairs(const float* x, int64_t M, int64_t K, int64_t k_pairs,
                                               std::vector<uint32_t>& out) {
  out.assign(M * k_pairs, 0);
  for (int64_t m = 0; m < M; ++m) {
    const float* row = x + m * K;
    uint16_t* dst = reinterpret_cast<uint16_t*>(out.data() + m * k_pairs);
    int64_t k = 0;
    for (; k + kLanes <= K; k += kLanes) {
      const __m256bh rounded = _mm512_cvtneps_pbh(_mm512_loadu_ps(row + k));
      std::memcpy(dst + k, &rounded, sizeof rounded);
    }
    if (k < K) {
      const __m512 tail = _mm512_maskz_loadu_ps(static_cast<__mmask16>((1u << (K - k)) - 1), row + k);
      const __m256bh rounded = _mm512_cvtneps_pbh(tail);
      std::memcpy(dst + k, &rounded, (K - k) * sizeof(uint16_t));
    }
  }
}

void panel_gemm_avx512(const PanelGemmArgs& args) {
  switch (args.dtype) {
    case WeightDtype::kFloat32:
      return run_rows<float>(args);
    case WeightDtype::kBFloat16:
      return run_widened_pairs(args);
    case WeightDtype::kFloat16:
      return run_rows<F16Bits>(args);
  }
}

void panel_gemm_avx512_bf16_products(const PanelGemmArgs& a) {
  thread_local std::vector<uint32_t> x_pairs;
  const int64_t k_pairs = (a.K + 1) / 2;
  round_rows_to_bf16_pairs(a.x, a.M, a.K, k_pairs, x_pairs);
  const Bf16Bits* panels = static_cast<const Bf16Bits*>(a.panels);
  for_each_tile(a, [&](auto rows, int64_t p, int64_t m, const float* bias, const __mmask16(&mask)[kVectors]) {
    tile_bf16_products<decltype(rows)::value>(x_pairs.data() + m * k_pairs, k_pairs, panels + p * 2 * k_pairs * kWidth,
                                              bias, a.y + m * a.N + p * kWidth, a.N, mask);
  });
}

}  // namespace seed::models
