// TargetRows: the target's distributions p at the contexts of one draft,
// read from its logits only where the verifier needs them.
//
// p is the request's transformation of the target's logits
// (sampling_distribution: temperature, top-k, top-p; greedy: one-hot at the
// argmax). Acceptance reads p at single tokens only (the drafted ones, and
// after a rejection the support of q: verifier.cpp keeps its residuals
// sparse), and a whole row only where the verdict's last token is drawn. So
// a context with temperature alone costs two passes over its logits (their
// max, the mass of their exponentials) and then O(1) per token: the row's
// softmax scale, the same numbers the dense row is made of, so p(x) is bit
// for bit what sampling_distribution writes. A top-k or top-p context needs
// the row's threshold, which is where the sort of the dense transformation
// goes: its row is computed once, on first read. Contexts the walk never
// reaches cost nothing.
//
// The logits are either rows in host memory or a LogitSummary: what the
// device holding them computed (spec/api/logit_rows.h). From a summary no
// row is read: p at the tokens acceptance reads comes from the summary
// (with top-k/top-p's cut, RowSummary), and the last token is drawn where
// the logits are (LogitRows::draw). A row is copied only when asked for
// (row()).
//
// Torch-free. Not thread-safe (it caches per context); one verify at a time.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "models/base/sampling.h"
#include "spec/api/logit_rows.h"

namespace seed::spec {

// The most likely entries of a distribution, most likely first; what a
// target reports of p for drafters that learn from it (STAND).
struct TopTokens {
  std::vector<int32_t> ids;
  std::vector<float> probs;  // p of each id (not renormalised)
};

// The `k` entries of `probs` [vocab] with the largest probability, zeros
// left out; ties to the lower id.
TopTokens top_entries(const float* probs, int64_t vocab, int k);

// The residual of p at one context after rejections (verifier.h):
// r(v) = rest * p(v), except r(ids[j]) = values[j]. Default: p itself.
struct Residual {
  double rest = 1.0;
  std::vector<int32_t> ids;
  std::vector<double> values;
  bool is_p() const { return ids.empty() && rest == 1.0; }
};

// The token that ends a verdict: drawn from `residual` of p at `context` by
// inverse CDF in vocabulary order (sample_from) with the uniform u, or,
// where `race` is set, p's own token (the residual being p): the winner of
// the exponential race on that stream (race_from), as sampling alone draws.
struct FinalDraw {
  int64_t context = 0;
  Residual residual;
  double u = 0.0;
  std::optional<uint64_t> race;
};

class TargetRows {
 public:
  // logits: [contexts x vocab] row-major, borrowed while this lives.
  // Throws kInvalidArgument naming the argument if logits is null, contexts
  // < 1, vocab outside [1, 2^31), or sampling invalid.
  TargetRows(const float* logits, int64_t contexts, int64_t vocab, const SamplingParams& sampling);
  // From a summary of contexts.size() contexts (>= 1) with its rows set;
  // throws kInvalidArgument as above.
  TargetRows(LogitSummary summary, int64_t vocab, const SamplingParams& sampling);

  int64_t contexts() const { return static_cast<int64_t>(contexts_.size()); }
  int64_t vocab() const { return vocab_; }
  const SamplingParams& sampling() const { return sampling_; }

  // p(token) at `context`: from a summary, where it holds the token's logit
  // (a drafted token, q's support or a top entry), else from the row.
  // Throws kInvalidArgument, as sampling_distribution does, if the
  // context's logits hold a NaN or +inf or are all -inf.
  float prob(int64_t context, int32_t token);
  // The whole p row [vocab] at `context`, computed on first use; valid while
  // this lives.
  const float* row(int64_t context);
  // argmax p at `context` (ties to the lower id): greedy's choice.
  int32_t argmax(int64_t context);
  // top_entries of p at `context`: from the summary when it holds k or
  // more (LogitSummary::top), else from the row.
  TopTokens top(int64_t context, int k);
  // The token `draw` gives: from its residual's row, built here from p's
  // row, or, from a summary of rows sampled by temperature alone, drawn
  // where the logits are (LogitRows::draw).
  int32_t draw(const FinalDraw& draw);
  // p's own token at `context`: the winner of the race on `stream`
  // (race_from), kept per context (a context is sampled with one stream), or
  // the token set_sample gave it.
  int32_t sample(int64_t context, uint64_t stream);
  // Records `token` as p's draw at `context`, made elsewhere (a batch of
  // draws where the rows are: draw_final_tokens).
  void set_sample(int64_t context, int32_t token);

 private:
  struct Context {
    bool scaled = false;  // `scale` is set (temperature-only rows)
    SoftmaxScale scale;
    std::vector<float> row;  // empty until row() or a thresholded prob()
    int32_t sampled = -1;    // sample()'s token, once drawn
  };
  // From host logits, whether p at a token needs its context's whole row:
  // greedy (the argmax), a top-k below the vocabulary or a top-p below 1
  // (their thresholds). By temperature alone, the row's softmax scale is
  // enough.
  bool needs_row() const;
  bool summarised() const { return summary_.rows != nullptr; }
  // Draws are made where the rows are: no row crosses to the host.
  bool draws_remotely() const { return summarised() && !sampling_.greedy(); }
  RowDraw row_draw(const FinalDraw& draw) const;
  friend std::vector<int32_t> draw_final_tokens(const std::vector<TargetRows*>& targets,
                                                const std::vector<const FinalDraw*>& draws);
  const float* logits_of(int64_t context) const;
  Context& at(int64_t context);
  // The summary's numbers for `context`; throws for a row no distribution
  // can come from.
  const RowSummary& summary_of(int64_t context) const;
  // summarised(): p at `token`, whose logit is `logit`.
  float summary_prob(const RowSummary& s, int32_t token, float logit) const;
  // summarised(): the row built from the summary and a copied logits row.
  void summary_row(int64_t context, std::vector<float>& row) const;

  const float* logits_ = nullptr;
  LogitSummary summary_;
  int64_t vocab_;
  SamplingParams sampling_;
  std::vector<Context> contexts_;
};

// The token of each draws[i] from *targets[i], as TargetRows::draw gives
// it; the draws made where the logits are go in one batch per LogitRows.
std::vector<int32_t> draw_final_tokens(const std::vector<TargetRows*>& targets,
                                       const std::vector<const FinalDraw*>& draws);

}  // namespace seed::spec
