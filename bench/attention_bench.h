// Attention benchmark: the CPU attention of one forward alone, read from
// the paged KV cache, at the row counts decoding and verification use.
//
// For each context, every layer's keys and values sit in a pool of their
// own, one sequence's blocks in shuffled order (as a long-running cache
// leaves them), so that entries stream from memory as in a real forward;
// k rows (a verified chain: row i attends to context + i + 1 positions) go
// through paged_attention with the model's heads, head size, kernel and KV
// dtype. Medians.
#pragma once

#include <cstdint>
#include <vector>

#include "models/causal_lm.h"

namespace seed::bench {

struct AttentionBenchRow {
  int64_t context = 0;
  int64_t rows = 0;
  double seconds = 0;          // all layers of one forward
  double bytes_per_s = 0;      // keys and values read once, over the time
  double flops_per_s = 0;      // 4 x dim per query head and attended entry
};

// REQUIRES a model on CPU.
std::vector<AttentionBenchRow> run_attention_bench(models::CausalLM& model,
                                                   const std::vector<int64_t>& contexts,
                                                   const std::vector<int64_t>& row_counts, int repeats);

}  // namespace seed::bench
