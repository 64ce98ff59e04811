// panel_gemm: y[M, N] = x[M, K] . W[N, K]^T (+ bias) on CPU, float32
// arithmetic, for weights packed once at load time into panels of float32,
// bfloat16 or float16.
//
// Why not BLAS: decoding and speculative verification multiply 1-16 rows by
// every weight matrix, and verification width is only "free" if a k-token
// forward costs little more than a 1-token one. OpenBLAS runs those shapes
// at a third of the core's peak or less (tuned for large M; it packs the
// weights again on every call), and has no half-size weights. Here the
// weights are packed once: panels of output columns (64 for AVX-512, 16 for
// AVX2), zero-padded, whose 16-column slices each stream sequentially from
// memory, [K, 16] contiguous, and stay in L2 while every tile of rows of x
// is multiplied into them (the tile's accumulators in registers, one
// broadcast of x per row and one load of W per vector, no horizontal
// sums). On AVX-512 up to 16 rows take one pass over the weights, so
// that verifying them reads the weights as a decode step does, at the
// pace the multiply-adds set. Half-size weights are widened to float32 in
// registers, except where the kernel multiplies bfloat16 as it is: two k
// an instruction with vdpbf16ps (kAvx512Bf16), or on AMX tiles
// (panel_gemm_amx.cpp), 16 rows at a time, so verifying 16 rows costs about
// what decoding one does. Measurements in docs/performance.md.
// Thread-safe: pure functions.
#pragma once

#include <cstdint>

#include "models/cpu_kernel.h"

namespace seed::models {

// How far ahead of a panel's stream the kernels ask for its cache lines.
// Hardware prefetchers alone fall behind once each panel row carries
// several rows' multiply-adds: a Xeon verified 4 tokens of a 1B model in
// 1.45 decode steps without these requests and 1.2 with them, and decoded
// 12 tokens/s against 8-10 (docs/performance.md).
constexpr int64_t kPanelPrefetchBytes = 8192;

// Output columns per panel of `kernel`'s layout.
int64_t panel_width(CpuKernel kernel);

struct PanelGemmArgs {
  const float* x = nullptr;       // [M, K] row-major
  // [ceil(N / width), panel_rows(kernel, dtype, K), width] of `dtype`,
  // width = panel_width(kernel) (pack_panels).
  const void* panels = nullptr;
  WeightDtype dtype = WeightDtype::kFloat32;
  const float* bias = nullptr;    // [N], or null
  float* y = nullptr;             // [M, N] row-major; must not overlap x
  int64_t M = 0, K = 0, N = 0;
  // Only the columns of panels [panel_begin, panel_end), so that threads can
  // split the panels.
  int64_t panel_begin = 0, panel_end = 0;
};

// REQUIRES cpu_kernel_supported(kernel).
void panel_gemm(CpuKernel kernel, const PanelGemmArgs& args);

// Whether `kernel` rounds the rows of x to bfloat16 before multiplying
// `dtype` weights: kAmx and kAvx512Bf16 on bfloat16 weights. Elsewhere x
// stays float32.
bool panel_gemm_rounds_x(CpuKernel kernel, WeightDtype dtype);

// Rows of a packed panel: K, or K rounded up to even where `kernel` reads
// pairs of k (bfloat16 weights on the AVX-512 kernels), and to a multiple
// of 32 where it reads them in AMX tiles (bfloat16 weights on kAmx).
int64_t panel_rows(CpuKernel kernel, WeightDtype dtype, int64_t K);

// Packs W [N, K] row-major (elements of `dtype`) into `panels` of
// panel_width(kernel) columns and panel_rows(kernel, dtype, K) rows, which
// must hold ceil(N / width) of them; padding is zero. The AVX-512 kernels
// lay a panel out as four 16-column slices, one after the other. Where the
// kernel reads pairs of k, rows k and k + 1 are interleaved per column
// (w[k][c], w[k + 1][c]), as vdpbf16ps takes them and as one instruction
// per 16 weights widens them; AMX takes those pairs in blocks of 32 k by
// 16 columns, each block contiguous (one tile).
void pack_panels(CpuKernel kernel, WeightDtype dtype, const void* weight, int64_t N, int64_t K, void* panels);

// The inverse, for `count` rows of W: out [count, K] (elements of `dtype`)
// gets rows rows[0], rows[1], ... of the W that pack_panels packed.
void unpack_panel_rows(CpuKernel kernel, WeightDtype dtype, const void* panels, int64_t K, const int64_t* rows,
                       int64_t count, void* out);

}  // namespace seed::models
