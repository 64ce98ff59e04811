// Rows of logits that stay on the device that computed them (a GPU's
// memory), and what that device reports of them, so that TargetRows
// (spec/api/target_rows.h) reads p without copying rows: per row its
// summary (RowSummary), the logits at the tokens acceptance reads
// (TokenLogit), and the draws made where the rows are (LogitRows, RowDraw).
//
// Torch-free. Plain values, not synchronised; the LogitSummaries of one
// forward share its LogitRows.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "models/base/sampling.h"

namespace seed::spec {

struct Residual;  // spec/api/target_rows.h

// A token's logit at one context.
struct TokenLogit {
  int64_t context = 0;
  int32_t token = 0;
  float logit = 0.0f;
  // The order LogitSummary::token_logits is sorted in: by context, then token.
  static bool before(const TokenLogit& a, const TokenLogit& b) {
    return a.context != b.context ? a.context < b.context : a.token < b.token;
  }
};

// What the device holding a row of logits reports of it. For sampled
// requests p(v) = exp_nonpositive((logit(v) - max_logit) / temperature) *
// scale for the tokens top-k and top-p keep, else 0.
struct RowSummary {
  // The argmax (ties to the lower id), its logit, and 1 / the mass of the
  // kept tokens' scaled exponentials (0 for greedy requests). A NaN or
  // infinite max_logit marks a row no distribution can come from.
  SoftmaxScale softmax;
  // Under top-k or top-p, the last token kept in the order by descending
  // logit, ties to the lower id, and its logit; -1: every token is kept.
  int32_t last_kept = -1;
  float last_kept_logit = 0.0f;
  // Whether top-k and top-p keep `token`, whose logit is `logit`.
  bool keeps(int32_t token, float logit) const {
    return last_kept < 0 || logit > last_kept_logit || (logit == last_kept_logit && token <= last_kept);
  }
};

// A row of logits to draw from where it lies, with its summary.
struct RowDraw {
  int64_t row = 0;
  float temperature = 1.0f;
  RowSummary summary;
  const Residual* residual = nullptr;
  double u = 0.0;
  std::optional<uint64_t> race;  // as FinalDraw::race
};

// Rows of logits that stay where they were computed (a GPU's memory).
class LogitRows {
 public:
  virtual ~LogitRows() = default;
  // Writes row `row` (vocab floats) into `out`.
  virtual void copy_row(int64_t row, float* out) const = 0;
  // Per draw, the token drawn from its residual of p (as RowSummary
  // defines it from the row), as sample_from draws, or p's race winner as
  // race_from draws: every draw computed where the rows are, one copy of
  // the tokens back.
  virtual std::vector<int32_t> draw(const std::vector<RowDraw>& draws) const = 0;
};

// One draft's logits as the device that holds them summarises them.
struct LogitSummary {
  std::vector<RowSummary> contexts;
  // For sampled requests: the logits at each drafted token and at the
  // support of each context's q, sorted by (context, token).
  std::vector<TokenLogit> token_logits;
  // For sampled requests asked for them (SummaryItem::top), per context
  // the `top` tokens of largest logit, ties to the lower id, with their
  // logits: context c's are top_logits[c * top, (c + 1) * top).
  int top = 0;
  std::vector<TokenLogit> top_logits;
  // Where the rows are; context c is row first_row + c of `rows`.
  std::shared_ptr<const LogitRows> rows;
  int64_t first_row = 0;
};

}  // namespace seed::spec
