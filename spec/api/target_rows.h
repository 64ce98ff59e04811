// TargetRows: the target's distributions p at the contexts of one draft,
// read from its logits only where the verifier needs them.
//
// p is the request's transformation of the target's logits
// (sampling_distribution: temperature, top-k, top-p; greedy: one-hot at the
// argmax). Acceptance reads p at the drafted tokens only, and the whole row
// only where a rejection builds the residual or the bonus is drawn. So a
// context with temperature alone costs two passes over its logits (their
// max, the mass of their exponentials) and then O(1) per token: the row's
// softmax scale, the same numbers the dense row is made of, so p(x) is bit
// for bit what sampling_distribution writes. A top-k or top-p context needs
// the row's threshold, which is where the sort of the dense transformation
// goes: its row is computed once, on first read. Contexts the walk never
// reaches cost nothing.
//
// The logits are either rows in host memory or a LogitSummary: what the
// device holding them computed, with whole rows copied on demand. From a
// summary, greedy acceptance and p at drafted tokens under temperature
// alone read no row at all; a row is copied for a rejection's residual,
// the bonus draw of a sampled context, or a top-k/top-p threshold, and is
// then built with the summary's scale, so p(x) and the row agree bit for bit.
//
// Torch-free. Not thread-safe (it caches per context); one verify at a time.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "models/base/sampling.h"

namespace seed::spec {

// A drafted token's logit at the context it was drafted in.
struct DraftedLogit {
  int64_t context = 0;
  int32_t token = 0;
  float logit = 0.0f;
};

// One draft's logits as the device that holds them summarises them.
struct LogitSummary {
  // Per context: the argmax (ties to the lower id), its logit, and, for
  // sampling by temperature alone, 1 / the mass of the scaled exponentials
  // (else 0). A NaN or infinite max_logit marks a row no distribution can
  // come from.
  std::vector<SoftmaxScale> contexts;
  // Each drafted token's logit, for sampling by temperature alone (the
  // only rule that reads p at a token without its row).
  std::vector<DraftedLogit> drafted;
  // Writes the logits row of a context (vocab floats) into `out`.
  std::function<void(int64_t context, float* out)> copy_row;
};

// Whether p at a token needs its context's whole row: greedy (the argmax),
// a top-k below the vocabulary or a top-p below 1 (their thresholds). By
// temperature alone, the row's softmax scale is enough.
bool needs_whole_row(const SamplingParams& sampling, int64_t vocab);

class TargetRows {
 public:
  // logits: [contexts x vocab] row-major, borrowed while this lives.
  // Throws kInvalidArgument naming the argument if logits is null, contexts
  // < 1, vocab outside [1, 2^31), or sampling invalid.
  TargetRows(const float* logits, int64_t contexts, int64_t vocab, const SamplingParams& sampling);
  // From a summary of contexts.size() contexts (>= 1) with copy_row set;
  // throws kInvalidArgument as above.
  TargetRows(LogitSummary summary, int64_t vocab, const SamplingParams& sampling);

  int64_t contexts() const { return static_cast<int64_t>(contexts_.size()); }
  int64_t vocab() const { return vocab_; }
  const SamplingParams& sampling() const { return sampling_; }

  // p(token) at `context`. Throws kInvalidArgument, as sampling_distribution
  // does, if the context's logits hold a NaN or +inf or are all -inf.
  float prob(int64_t context, int32_t token);
  // The whole p row [vocab] at `context`, computed on first use; valid while
  // this lives.
  const float* row(int64_t context);
  // argmax p at `context` (ties to the lower id): greedy's choice.
  int32_t argmax(int64_t context);

 private:
  struct Context {
    bool scaled = false;  // `scale` is set (temperature-only rows)
    SoftmaxScale scale;
    std::vector<float> row;  // empty until row() or a thresholded prob()
  };
  bool needs_row() const { return needs_whole_row(sampling_, vocab_); }
  bool summarised() const { return static_cast<bool>(summary_.copy_row); }
  const float* logits_of(int64_t context) const;
  Context& at(int64_t context);
  // The summary's numbers for `context`; throws for a row no distribution
  // can come from.
  const SoftmaxScale& summary_of(int64_t context) const;
  // summarised(): the row built from the summary and a copied logits row.
  void summary_row(int64_t context, std::vector<float>& row) const;

  const float* logits_ = nullptr;
  LogitSummary summary_;
  int64_t vocab_;
  SamplingParams sampling_;
  std::vector<Context> contexts_;
};

}  // namespace seed::spec
