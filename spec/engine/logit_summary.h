// Summaries of verified logits computed where the logits are, so that
// acceptance on a GPU copies to the host a few numbers per row instead of
// every row: per row its argmax and largest logit, and for rows sampled by
// temperature alone the softmax scale and the drafted tokens' logits, all
// in one copy. Whole rows follow one at a time, only when the verifier asks
// for one (LogitSummary::copy_row).
#pragma once

#include <cstdint>
#include <vector>

#include <torch/torch.h>

#include "spec/api/verifier.h"

namespace seed::spec {

// One draft's rows of the verified logits.
struct SummaryItem {
  int64_t first_row = 0;  // context 0's row; context i is row first_row + i
  const DraftTree* draft = nullptr;  // n nodes, n + 1 contexts
  SamplingParams sampling;
};

// logits: [rows x vocab] float32 on any device; every item's rows inside
// it. The summaries' copy_row read `logits`, which they keep alive.
std::vector<LogitSummary> summarize_logits(const at::Tensor& logits, const std::vector<SummaryItem>& items);

}  // namespace seed::spec
