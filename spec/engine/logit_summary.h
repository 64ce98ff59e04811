// Summaries of verified logits computed where the logits are, so that
// acceptance on a GPU copies to the host a few numbers per row instead of
// every row: per row its argmax and largest logit, and for the rows of
// sampled requests the softmax scale, what top-k/top-p keep, the logits at
// the tokens acceptance reads (the drafted ones and q's support) and, when
// asked, the top entries (STAND's), all in one copy. The tokens the
// verifier draws are drawn there too (LogitRows::draw; every context's at
// once for the matching rule, draw_target_tokens): only the tokens come
// back, and no row crosses to the host.
#pragma once

#include <cstdint>
#include <vector>

#include <ATen/core/Tensor.h>

#include "spec/api/verifier.h"

namespace seed::spec {

// One draft's rows of the verified logits.
struct SummaryItem {
  int64_t first_row = 0;  // context 0's row; context i is row first_row + i
  const DraftTree* draft = nullptr;  // n nodes, n + 1 contexts
  SamplingParams sampling;
  int top = 0;  // sampled requests: the top entries of p wanted at every context (TargetRows::top)
};

// logits: [rows x vocab] float32 on any device; every item's rows inside
// it. The summaries share one LogitRows over `logits`, which it keeps alive.
std::vector<LogitSummary> summarize_logits(const at::Tensor& logits, const std::vector<SummaryItem>& items);

}  // namespace seed::spec
