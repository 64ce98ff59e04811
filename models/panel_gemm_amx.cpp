// panel_gemm on AMX (Sapphire Rapids and later) for bfloat16 weights: one
// TDPBF16PS multiplies 16 rows of x by 32 k of 16 columns, 8,192 products,
// where avx512-bf16's vdpbf16ps does 32: a core's tiles do several
// times the multiply-adds a cycle. Decode stays bound by streaming the weights; verifying k
// drafted tokens or a prompt's rows, bound by multiply-adds on AVX-512,
// now costs little more than the stream.
//
// The panels hold 64 columns, as the AVX-512 kernel's, with k in
// interleaved pairs laid out tile by tile (pack_panels): the 16 pairs of k
// of one 16-column slice are one contiguous B tile, so a panel streams
// from memory in order. Panels are padded to whole tiles of k
// (kAmxTileDepth), and x is rounded to bfloat16 pairs as for
// avx512-bf16.
//
// A call's rows go through tiles of min(M, 16) rows (a last one padded
// with zero rows, never stored). Each row's products and sums are the same
// operations in the same order whatever the tile's height, so a row's bits
// do not depend on how many rows share the call: a decoded token's logits
// equal the same token's verified in a chain.
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "models/panel_gemm_kernels.h"

#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"  // as in panel_gemm_avx512.cpp

#define SEED_AMX __attribute__((target("avx512f,avx512bf16,amx-tile,amx-bf16")))

namespace seed::models {
namespace {

constexpr int64_t kWidth = 64;                       // columns per panel (panel_width(kAmx))
constexpr int64_t kTileRows = 16;                    // rows of x per tile
constexpr int64_t kTilePairs = kAmxTileDepth / 2;    // k pairs per tile (rows of a B tile)
constexpr int64_t kSliceColumns = 16;                // columns per accumulator tile
constexpr int64_t kTileRowBytes = 64;
constexpr int64_t kTileElements = kTilePairs * kTileRowBytes / 2;  // bfloat16 weights in a B tile
// Rows of x multiplied into each panel before the next: as many whole
// tiles as keep their bfloat16 pairs within about 512 KB, so that x and the
// panel stay in L2 while a prompt's rows go through it.
constexpr int64_t kGroupBytes = 512 * 1024;

// The tile registers: tmm0-3 accumulate a block's four 16-column slices,
// tmm4 holds the block's rows of x, tmm5-7 take turns holding the weights.
struct alignas(64) TileConfig {
  uint8_t palette = 1;
  uint8_t start_row = 0;
  uint8_t reserved[14] = {};
  uint16_t bytes_per_row[16] = {};
  uint8_t rows[16] = {};
};

// `rows`: of x and of the accumulators, at most kTileRows.
SEED_AMX void configure_tiles(int64_t rows) {
  TileConfig config;
  for (int t = 0; t < 8; ++t) {
    config.rows[t] = static_cast<uint8_t>(t < 5 ? rows : kTilePairs);
    config.bytes_per_row[t] = kTileRowBytes;
  }
  _tile_loadconfig(&config);
}

// The tile instructions are asm statements that do not say they touch
// memory; this tells the compiler they do.
inline void memory_barrier() { asm volatile("" ::: "memory"); }

// out [rows, 64] = a tile's rows of x (k_pairs words each) . one panel.
SEED_AMX void multiply_block(const uint32_t* x, int64_t k_pairs, const uint16_t* panel, float* out) {
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  const int64_t x_stride = k_pairs * static_cast<int64_t>(sizeof(uint32_t));
  for (int64_t p = 0; p < k_pairs; p += kTilePairs) {
    const uint16_t* w = panel + p * kWidth * 2;
    _tile_loadd(4, x + p, x_stride);
    _tile_loadd(5, w, kTileRowBytes);
    _tile_dpbf16ps(0, 4, 5);
    _tile_loadd(6, w + kTileElements, kTileRowBytes);
    _tile_dpbf16ps(1, 4, 6);
    _tile_loadd(7, w + 2 * kTileElements, kTileRowBytes);
    _tile_dpbf16ps(2, 4, 7);
    _tile_loadd(5, w + 3 * kTileElements, kTileRowBytes);
    _tile_dpbf16ps(3, 4, 5);
  }
  constexpr int64_t out_stride = kWidth * sizeof(float);
  _tile_stored(0, out, out_stride);
  _tile_stored(1, out + kSliceColumns, out_stride);
  _tile_stored(2, out + 2 * kSliceColumns, out_stride);
  _tile_stored(3, out + 3 * kSliceColumns, out_stride);
  memory_barrier();
}

// y's `rows` x `columns` block from `out` (+ bias).
SEED_AMX void store_block(const float* out, int64_t rows, int64_t columns, const float* bias, float* y, int64_t ldy) {
  for (int64_t c = 0; c < columns; c += kSliceColumns) {
    const int64_t left = columns - c;
    const __mmask16 mask = left >= kSliceColumns ? __mmask16(0xFFFF) : static_cast<__mmask16>((1u << left) - 1);
    const __m512 b = bias ? _mm512_maskz_loadu_ps(mask, bias + c) : _mm512_setzero_ps();
    for (int64_t r = 0; r < rows; ++r) {
      _mm512_mask_storeu_ps(y + r * ldy + c, mask, _mm512_add_ps(_mm512_loadu_ps(out + r * kWidth + c), b));
    }
  }
}

SEED_AMX void run(const PanelGemmArgs& a) {
  if (a.M == 0) return;
  const int64_t k_pairs = panel_rows(CpuKernel::kAmx, WeightDtype::kBFloat16, a.K) / 2;
  const int64_t block_rows = std::min(a.M, kTileRows);
  const int64_t padded_rows = (a.M + block_rows - 1) / block_rows * block_rows;
  thread_local std::vector<uint32_t> x_pairs;
  round_rows_to_bf16_pairs(a.x, a.M, a.K, k_pairs, x_pairs);
  x_pairs.resize(padded_rows * k_pairs, 0);
  memory_barrier();
  const int64_t group_rows =
      std::max(block_rows, kGroupBytes / (k_pairs * static_cast<int64_t>(sizeof(uint32_t))) / block_rows * block_rows);
  const uint16_t* panels = static_cast<const uint16_t*>(a.panels);
  alignas(64) float out[kTileRows * kWidth];
  configure_tiles(block_rows);
  for (int64_t group = 0; group < a.M; group += group_rows) {
    const int64_t group_end = std::min(a.M, group + group_rows);
    for (int64_t p = a.panel_begin; p < a.panel_end; ++p) {
      const int64_t n = p * kWidth, columns = std::min(kWidth, a.N - n);
      const uint16_t* panel = panels + p * 2 * k_pairs * kWidth;
      const float* bias = a.bias ? a.bias + n : nullptr;
      for (int64_t m = group; m < group_end; m += block_rows) {
        multiply_block(x_pairs.data() + m * k_pairs, k_pairs, panel, out);
        store_block(out, std::min(block_rows, a.M - m), columns, bias, a.y + m * a.N + n, a.N);
      }
    }
  }
  _tile_release();
}

}  // namespace

void panel_gemm_amx(const PanelGemmArgs& args) { run(args); }

}  // namespace seed::models
