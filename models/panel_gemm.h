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
// AVX2: what a tile's registers hold), each [K, width] contiguous and
// zero-padded, so a panel streams sequentially from memory and
// stays in L2 while every tile of rows of x is multiplied into it (the tile's
// accumulators in registers, one broadcast of x per row and one load of W per
// vector, no horizontal sums). Half-size weights are widened to float32 in
// registers. Measurements in docs/benchmarks.md. Thread-safe: pure functions.
#pragma once

#include <cstdint>

#include "models/cpu_kernel.h"

namespace seed::models {

// Output columns per panel of `kernel`'s layout.
int64_t panel_width(CpuKernel kernel);

struct PanelGemmArgs {
  const float* x = nullptr;       // [M, K] row-major
  // [ceil(N / width), K, width] of `dtype`, width = panel_width(kernel)
  // (pack_panels).
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

// Packs W [N, K] row-major (elements of `element_bytes`: 4 for float32, 2
// for bfloat16/float16 bits) into `panels` of `width` columns, which must
// hold ceil(N / width) * K * width elements; the padding columns are zero.
void pack_panels(const void* weight, int64_t N, int64_t K, int64_t element_bytes, int64_t width, void* panels);

}  // namespace seed::models
