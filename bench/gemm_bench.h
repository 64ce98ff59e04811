// GEMM benchmark: the CPU matrix products of one forward, panel_gemm against
// OpenBLAS, at the row counts decoding and verification use.
//
// Multiplies every weight matrix of the model in forward order (so weights
// stream from memory as in a real forward, not from a hot cache) by k rows,
// with the packed panels (what seed runs: the model's kernel and weight
// dtype) and with OpenBLAS on float32 copies (gemv on [out, in] for one row,
// gemm on [in, out] for more). Medians.
#pragma once

#include <cstdint>
#include <vector>

#include "models/causal_lm.h"

namespace seed::bench {

struct GemmBenchRow {
  int64_t rows = 0;
  double panel_seconds = 0;  // all matrices of one forward
  double blas_seconds = 0;
  double panel_gfma_per_s = 0;
};

// REQUIRES a model on CPU.
std::vector<GemmBenchRow> run_gemm_bench(models::CausalLM& model, const std::vector<int64_t>& row_counts,
                                         int repeats);

}  // namespace seed::bench
