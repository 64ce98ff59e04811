// panel_gemm on AVX-512F. A panel's 64 columns sit as four 16-column
// slices, each [K, 16] contiguous (pack_panels), and a tile multiplies one
// group of rows by 1, 2 or 4 slices: up to 6 rows x 4 slices, 12 x 2 or
// 16 x 1, 16-24 zmm accumulators. A verification's rows (up to 16) thus take
// one pass over the weights, each slice a sequential stream that memory
// delivers at the rate the multiply-adds consume it; tiles of 6 rows x 64
// columns left 16 rows to three passes, the first bound by memory and the
// others by multiply-adds with the memory idle.
//
// bfloat16 weights sit in slices of k pairs, and there are two ways to
// multiply them. kAvx512 widens each pair to two float32 vectors (a shift
// and a mask, one instruction per 16 weights) and multiplies them by
// float32 rows with FMAs. kAvx512Bf16 (AVX512_BF16) multiplies the pairs as
// they are with vdpbf16ps, two k an instruction, by rows rounded to bfloat16
// first (as GPU inference of a bfloat16 model does); products and sums stay
// float32. Once the weights stream at full rate, a verification forward of
// several rows is bound by multiply-adds: which way does more of them a
// second depends on the core (best_cpu_kernel).
//
// Every output is its bias plus the products in k order, whatever the
// tile, so a row's bits do not depend on which rows share the call.
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
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

constexpr int64_t kWidth = 64;                // columns per panel (panel_width(kAvx512))
constexpr int64_t kLanes = 16;                // floats per zmm: columns per slice
constexpr int64_t kSlices = kWidth / kLanes;  // slices per panel
constexpr int64_t kMaxGroupRows = 16;         // rows of x per tile
constexpr int64_t kMaxWideRows = 6;           // rows of a tile of four slices

// Slices a tile of `rows` rows multiplies at once: as many as keep its
// accumulators within 24 of the 32 registers.
constexpr int64_t slices_per_tile(int64_t rows) { return rows <= kMaxWideRows ? 4 : rows <= 12 ? 2 : 1; }

// The rows of x a tile multiplies. Tiles of up to kMaxWideRows rows read
// x as it is, row r at r * ld; taller ones a k-major copy (transpose_rows),
// so that a k's broadcasts sit at constant offsets from one pointer, in one
// cache line, where x's own rows would each take a register to address.
template <typename T>
struct GroupRows {
  const T* x;
  int64_t ld;
};

template <int64_t rows, typename T>
inline T x_at(const GroupRows<T>& g, int64_t r, int64_t k) {
  if constexpr (rows <= kMaxWideRows) {
    return g.x[r * g.ld + k];
  } else {
    return g.x[k * rows + r];
  }
}

// 16 weights of a slice of rows, widened to float32.
SEED_AVX512 inline __m512 load16(const float* w) { return _mm512_loadu_ps(w); }
SEED_AVX512 inline __m512 load16(const F16Bits* w) {
  return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(w)));
}

// A tile's accumulators start at the bias (or zero) and end in y.
template <int64_t rows, int64_t slices>
SEED_AVX512 inline void start_tile(__m512 (&acc)[rows][slices], const float* bias,
                                   const __mmask16 (&mask)[slices]) {
#pragma GCC unroll 4
  for (int64_t s = 0; s < slices; ++s) {
    const __m512 init = bias ? _mm512_maskz_loadu_ps(mask[s], bias + s * kLanes) : _mm512_setzero_ps();
#pragma GCC unroll 16
    for (int64_t r = 0; r < rows; ++r) acc[r][s] = init;
  }
}

template <int64_t rows, int64_t slices>
SEED_AVX512 inline void store_tile(const __m512 (&acc)[rows][slices], float* y, int64_t ldy,
                                   const __mmask16 (&mask)[slices]) {
#pragma GCC unroll 16
  for (int64_t r = 0; r < rows; ++r) {
#pragma GCC unroll 4
    for (int64_t s = 0; s < slices; ++s) _mm512_mask_storeu_ps(y + r * ldy + s * kLanes, mask[s], acc[r][s]);
  }
}

// acc[r][s] += x[r][k] * w[s] for each row r of the tile.
template <int64_t rows, int64_t slices>
SEED_AVX512 inline void multiply_add(__m512 (&acc)[rows][slices], const GroupRows<float>& x, int64_t k,
                                     const __m512 (&w)[slices]) {
#pragma GCC unroll 16
  for (int64_t r = 0; r < rows; ++r) {
    const __m512 xr = _mm512_set1_ps(x_at<rows>(x, r, k));
#pragma GCC unroll 4
    for (int64_t s = 0; s < slices; ++s) acc[r][s] = _mm512_fmadd_ps(xr, w[s], acc[r][s]);
  }
}

// Where a tile's weights and outputs are. slice: its first slice, each
// next one slice_stride weights on; y: its first row and column.
template <typename W>
struct TileSpan {
  const W* slice;
  int64_t slice_stride;
  const float* bias;  // at the tile's first column, or null
  float* y;
  int64_t ldy;
};

// Where slice s of a tile that reads `slices` slices side by side holds its
// `count` weights at `offset`; asks for that stream's lines ahead.
template <int64_t slices, int64_t count, typename W>
inline const W* slice_step(const TileSpan<W>& t, int64_t s, int64_t offset) {
  const W* step = t.slice + s * t.slice_stride + offset;
  prefetch_ahead<count * sizeof(W), slices>(step);
  return step;
}

// rows x (16 * slices) block of y from slices of rows ([K, 16] each,
// float32 or float16). Fully unrolled so that the accumulators live in
// registers.
template <int64_t rows, int64_t slices, typename W>
SEED_AVX512 void tile(const GroupRows<float>& x, int64_t K, const TileSpan<W>& t, const __mmask16 (&mask)[slices]) {
  __m512 acc[rows][slices];
  start_tile(acc, t.bias, mask);
  for (int64_t k = 0; k < K; ++k) {
    __m512 w[slices];
#pragma GCC unroll 4
    for (int64_t s = 0; s < slices; ++s) w[s] = load16(slice_step<slices, kLanes>(t, s, k * kLanes));
    multiply_add(acc, x, k, w);
  }
  store_tile(acc, t.y, t.ldy, mask);
}

// tile() from slices of bfloat16 k pairs: each 32-bit word holds one
// column's (w[2p][c], w[2p + 1][c]), and a bfloat16 is the top half of a
// float32, so the word shifted up 16 bits is w[2p][c] as a float32 and the
// word with its low half cleared is w[2p + 1][c]. The products and their
// order are tile<float>'s on the same values.
template <int64_t rows, int64_t slices>
SEED_AVX512 void tile_widened_pairs(const GroupRows<float>& x, int64_t K, const TileSpan<Bf16Bits>& t,
                                    const __mmask16 (&mask)[slices]) {
  __m512 acc[rows][slices];
  start_tile(acc, t.bias, mask);
  const __m512i high_half = _mm512_set1_epi32(static_cast<int>(0xFFFF0000u));
  const int64_t k_pairs = (K + 1) / 2;
  for (int64_t p = 0; p < k_pairs; ++p) {
    // Each slice's words are loaded once a half: with 24 accumulators, the
    // registers do not hold them between the halves.
    const Bf16Bits* step[slices];
    __m512 w[slices];
#pragma GCC unroll 4
    for (int64_t s = 0; s < slices; ++s) {
      step[s] = slice_step<slices, 2 * kLanes>(t, s, p * 2 * kLanes);
      w[s] = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_loadu_si512(step[s]), 16));
    }
    multiply_add(acc, x, 2 * p, w);
    if (2 * p + 1 == K) break;  // an odd K's last pair is padding
#pragma GCC unroll 4
    for (int64_t s = 0; s < slices; ++s) {
      w[s] = _mm512_castsi512_ps(_mm512_and_si512(_mm512_loadu_si512(step[s]), high_half));
    }
    multiply_add(acc, x, 2 * p + 1, w);
  }
  store_tile(acc, t.y, t.ldy, mask);
}

// tile() with vdpbf16ps, on slices of bfloat16 k pairs. x: the rows of x
// as bfloat16, two per 32-bit word (the last pair padded with zero when K
// is odd).
template <int64_t rows, int64_t slices>
SEED_AVX512_BF16 void tile_bf16_products(const GroupRows<uint32_t>& x, int64_t k_pairs, const TileSpan<Bf16Bits>& t,
                                         const __mmask16 (&mask)[slices]) {
  __m512 acc[rows][slices];
  start_tile(acc, t.bias, mask);
  for (int64_t p = 0; p < k_pairs; ++p) {
    __m512i w[slices];  // 16 columns' (w[2p][c], w[2p + 1][c]) each
#pragma GCC unroll 4
    for (int64_t s = 0; s < slices; ++s) {
      w[s] = _mm512_loadu_si512(slice_step<slices, 2 * kLanes>(t, s, p * 2 * kLanes));
    }
#pragma GCC unroll 16
    for (int64_t r = 0; r < rows; ++r) {
      const __m512bh xr = reinterpret_cast<__m512bh>(_mm512_set1_epi32(static_cast<int>(x_at<rows>(x, r, p))));
#pragma GCC unroll 4
      for (int64_t s = 0; s < slices; ++s) {
        acc[r][s] = _mm512_dpbf16_ps(acc[r][s], xr, reinterpret_cast<__m512bh>(w[s]));
      }
    }
  }
  store_tile(acc, t.y, t.ldy, mask);
}

__mmask16 lane_mask(int64_t remaining) {
  if (remaining >= kLanes) return 0xFFFF;
  if (remaining <= 0) return 0;
  return static_cast<__mmask16>((1u << remaining) - 1);
}

// 16 rows of 16 32-bit elements, transposed in place.
SEED_AVX512 void transpose16(__m512 (&v)[16]) {
  __m512 a[16];
  for (int i = 0; i < 16; i += 2) {  // pairs of rows, interleaved within 128-bit lanes
    a[i] = _mm512_unpacklo_ps(v[i], v[i + 1]);
    a[i + 1] = _mm512_unpackhi_ps(v[i], v[i + 1]);
  }
  __m512 b[16];  // b[4g + e], lane l: rows 4g..4g+3 at column 4l + e
  for (int g = 0; g < 4; ++g) {
    const __m512d lo = _mm512_castps_pd(a[4 * g]), hi = _mm512_castps_pd(a[4 * g + 1]);
    const __m512d lo2 = _mm512_castps_pd(a[4 * g + 2]), hi2 = _mm512_castps_pd(a[4 * g + 3]);
    b[4 * g] = _mm512_castpd_ps(_mm512_unpacklo_pd(lo, lo2));
    b[4 * g + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(lo, lo2));
    b[4 * g + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(hi, hi2));
    b[4 * g + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(hi, hi2));
  }
  for (int e = 0; e < 4; ++e) {  // column 4l + e gathers lane l of b[e], b[4 + e], b[8 + e], b[12 + e]
    const __m512 c0 = _mm512_shuffle_f32x4(b[e], b[4 + e], 0x88), c1 = _mm512_shuffle_f32x4(b[e], b[4 + e], 0xDD);
    const __m512 d0 = _mm512_shuffle_f32x4(b[8 + e], b[12 + e], 0x88);
    const __m512 d1 = _mm512_shuffle_f32x4(b[8 + e], b[12 + e], 0xDD);
    v[e] = _mm512_shuffle_f32x4(c0, d0, 0x88);
    v[4 + e] = _mm512_shuffle_f32x4(c1, d1, 0x88);
    v[8 + e] = _mm512_shuffle_f32x4(c0, d0, 0xDD);
    v[12 + e] = _mm512_shuffle_f32x4(c1, d1, 0xDD);
  }
}

// out[k * rows + r] = x[r * ld + k] for rows <= 16 rows of `cols` 32-bit
// elements: x's rows k-major, 16 columns at a time.
SEED_AVX512 void transpose_rows(const void* x, int64_t ld, int64_t rows, int64_t cols, void* out) {
  const float* in = static_cast<const float*>(x);
  float* columns = static_cast<float*>(out);
  const __mmask16 row_mask = lane_mask(rows);
  for (int64_t c = 0; c < cols; c += kLanes) {
    const __mmask16 col_mask = lane_mask(cols - c);
    __m512 v[16];
    for (int64_t r = 0; r < 16; ++r) {
      v[r] = r < rows ? _mm512_maskz_loadu_ps(col_mask, in + r * ld + c) : _mm512_setzero_ps();
    }
    transpose16(v);
    const int64_t count = std::min(kLanes, cols - c);
    for (int64_t j = 0; j < count; ++j) _mm512_mask_storeu_ps(columns + (c + j) * rows, row_mask, v[j]);
  }
}

// Calls fn(std::integral_constant<int64_t, rows>{}) for rows in [1, kMaxGroupRows].
template <typename Fn>
void with_rows(int64_t rows, Fn&& fn) {
  switch (rows) {
#define SEED_ROWS(R) \
  case R:            \
    return fn(std::integral_constant<int64_t, R>{});
    SEED_ROWS(1) SEED_ROWS(2) SEED_ROWS(3) SEED_ROWS(4) SEED_ROWS(5) SEED_ROWS(6) SEED_ROWS(7) SEED_ROWS(8)
    SEED_ROWS(9) SEED_ROWS(10) SEED_ROWS(11) SEED_ROWS(12) SEED_ROWS(13) SEED_ROWS(14) SEED_ROWS(15) SEED_ROWS(16)
#undef SEED_ROWS
  }
}

// A call's rows in groups of at most kMaxGroupRows, as even as can be: M
// up to 6 in one wide group, more in groups of 7 or more.
struct RowGroups {
  int64_t M, count;
  explicit RowGroups(int64_t M) : M(M), count((M + kMaxGroupRows - 1) / kMaxGroupRows) {}
  int64_t start(int64_t g) const { return M * g / count; }
  int64_t rows(int64_t g) const { return start(g + 1) - start(g); }
};

// How a call's tiles read x ([M, cols] of 32-bit elements): x itself where
// its rows make one wide group, else each group's rows k-major in
// `copies` (each thread's own).
template <typename T>
class RowsAsRead {
 public:
  RowsAsRead(const T* x, int64_t cols, const RowGroups& groups, std::vector<T>& copies)
      : x_(x), cols_(cols), groups_(groups) {
    if (groups.M <= kMaxWideRows) return;
    copies.resize(groups.M * cols);
    x_ = copies.data();
    for (int64_t g = 0; g < groups.count; ++g) {
      transpose_rows(x + groups.start(g) * cols, cols, groups.rows(g), cols, copies.data() + groups.start(g) * cols);
    }
  }
  GroupRows<T> group(int64_t g) const { return {x_ + groups_.start(g) * cols_, cols_}; }

 private:
  const T* x_;
  int64_t cols_;
  RowGroups groups_;
};

// Calls tile(rows, g, span, mask) for each block of y that one tile
// computes, rows an std::integral_constant and span a TileSpan<W>: for
// each panel, each group g of rows, the panel's slices slices_per_tile(rows)
// at a time.
template <typename W, typename Tile>
void for_each_tile(const PanelGemmArgs& a, const RowGroups& groups, Tile&& tile) {
  const int64_t slice_stride = panel_rows(CpuKernel::kAvx512, a.dtype, a.K) * kLanes;
  const W* panels = static_cast<const W*>(a.panels);
  for (int64_t p = a.panel_begin; p < a.panel_end; ++p) {
    for (int64_t g = 0; g < groups.count; ++g) {
      with_rows(groups.rows(g), [&](auto rows) {
        constexpr int64_t slices = slices_per_tile(decltype(rows)::value);
        for (int64_t s = 0; s < kSlices; s += slices) {
          const int64_t n = p * kWidth + s * kLanes;
          if (n >= a.N) break;
          __mmask16 mask[slices];
          for (int64_t i = 0; i < slices; ++i) mask[i] = lane_mask(a.N - n - i * kLanes);
          const TileSpan<W> span{panels + (p * kSlices + s) * slice_stride, slice_stride,
                                 a.bias ? a.bias + n : nullptr, a.y + groups.start(g) * a.N + n, a.N};
          tile(rows, g, span, mask);
        }
      });
    }
  }
}

// Float32 or float16 weights.
template <typename W>
void run_rows(const PanelGemmArgs& a) {
  const RowGroups groups(a.M);
  thread_local std::vector<float> copies;
  const RowsAsRead<float> x(a.x, a.K, groups, copies);
  for_each_tile<W>(a, groups, [&](auto rows, int64_t g, const TileSpan<W>& span, const auto& mask) {
    constexpr int64_t r = decltype(rows)::value;
    tile<r, slices_per_tile(r)>(x.group(g), a.K, span, mask);
  });
}

void run_widened_pairs(const PanelGemmArgs& a) {
  const RowGroups groups(a.M);
  thread_local std::vector<float> copies;
  const RowsAsRead<float> x(a.x, a.K, groups, copies);
  for_each_tile<Bf16Bits>(a, groups, [&](auto rows, int64_t g, const TileSpan<Bf16Bits>& span, const auto& mask) {
    constexpr int64_t r = decltype(rows)::value;
    tile_widened_pairs<r, slices_per_tile(r)>(x.group(g), a.K, span, mask);
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
  const RowGroups groups(a.M);
  const int64_t k_pairs = (a.K + 1) / 2;
  thread_local std::vector<uint32_t> x_pairs, copies;
  round_rows_to_bf16_pairs(a.x, a.M, a.K, k_pairs, x_pairs);
  const RowsAsRead<uint32_t> x(x_pairs.data(), k_pairs, groups, copies);
  for_each_tile<Bf16Bits>(a, groups, [&](auto rows, int64_t g, const TileSpan<Bf16Bits>& span, const auto& mask) {
    constexpr int64_t r = decltype(rows)::value;
    tile_bf16_products<r, slices_per_tile(r)>(x.group(g), k_pairs, span, mask);
  });
}

}  // namespace seed::models
