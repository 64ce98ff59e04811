// panel_gemm: y[M, N] = x[M, K] . W[N, K]^T (+ bias) on CPU, float32, for
// weights packed once at load time into panels.
//
// Why not BLAS: decoding and speculative verification multiply 1-16 rows by
// every weight matrix, and verification width is only "free" if a k-token
// forward costs little more than a 1-token one. OpenBLAS runs those shapes
// at a third of the core's peak or less (tuned for large M; it packs the
// weights again on every call). Here the weights are packed once: panels of
// 64 output columns, each [K, 64] contiguous and zero-padded, so a panel
// streams sequentially from memory and stays in L2 while every 4-row tile of
// x is multiplied into it (4 x 64 accumulators in registers, one broadcast of
// x and four loads of W per 16 FMAs, no horizontal sums). Measurements in
// docs/benchmarks.md. Thread-safe: pure functions.
#pragma once

#include <cstdint>

namespace seed::models {

constexpr int64_t kPanelWidth = 64;  // output columns per panel

// True if this CPU can run panel_gemm (AVX-512F); otherwise use BLAS.
bool panel_gemm_supported();

// REQUIRES panel_gemm_supported(). x: [M, K] row-major; panels: the weight as
// [ceil(N / 64), K, 64] (see Linear::prepare_for_inference); bias: [N] or
// null; y: [M, N] row-major. Computes the columns of panels
// [panel_begin, panel_end) only, so that threads can split the panels.
// Buffers must not overlap.
void panel_gemm(const float* x, const float* panels, const float* bias, float* y, int64_t M, int64_t K, int64_t N,
                int64_t panel_begin, int64_t panel_end);

}  // namespace seed::models
