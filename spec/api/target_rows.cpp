#include "spec/api/target_rows.h"

#include <limits>

#include "models/base/error.h"

namespace seed::spec {

TargetRows::TargetRows(const float* logits, int64_t contexts, int64_t vocab, const SamplingParams& sampling)
    : logits_(logits), vocab_(vocab), sampling_(sampling) {
  SEED_CHECK(logits != nullptr, kInvalidArgument) << "TargetRows: logits is null";
  SEED_CHECK(contexts >= 1, kInvalidArgument) << "TargetRows: " << contexts << " contexts; a draft has at least one";
  SEED_CHECK(vocab > 0 && vocab <= std::numeric_limits<int32_t>::max(), kInvalidArgument)
      << "TargetRows: vocab must be in [1, 2^31), got " << vocab;
  sampling_.validate();
  contexts_.resize(static_cast<size_t>(contexts));
}

bool TargetRows::needs_row() const {
  const bool cut_k = sampling_.top_k > 0 && sampling_.top_k < vocab_;
  return sampling_.greedy() || cut_k || sampling_.top_p < 1.0f;
}

const float* TargetRows::logits_of(int64_t context) const { return logits_ + context * vocab_; }

TargetRows::Context& TargetRows::at(int64_t context) {
  SEED_CHECK(context >= 0 && context < this->contexts(), kInvalidArgument)
      << "TargetRows: context " << context << " outside [0, " << this->contexts() << ")";
  return contexts_[static_cast<size_t>(context)];
}

float TargetRows::prob(int64_t context, int32_t token) {
  SEED_CHECK(token >= 0 && token < vocab_, kInvalidArgument)
      << "TargetRows: token " << token << " outside the vocab [0, " << vocab_ << ")";
  if (needs_row()) return row(context)[token];
  Context& c = at(context);
  if (!c.row.empty()) return c.row[static_cast<size_t>(token)];
  if (!c.scaled) {
    c.scale = softmax_scale(logits_of(context), vocab_, sampling_.temperature);
    c.scaled = true;
  }
  return softmax_prob(logits_of(context), c.scale, sampling_.temperature, token);
}

const float* TargetRows::row(int64_t context) {
  Context& c = at(context);
  if (c.row.empty()) {
    c.row.resize(static_cast<size_t>(vocab_));
    sampling_distribution(logits_of(context), vocab_, sampling_, c.row.data());
  }
  return c.row.data();
}

int32_t TargetRows::argmax(int64_t context) { return seed::argmax(row(context), vocab_); }

}  // namespace seed::spec
