#include "spec/api/target_rows.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "models/base/error.h"
#include "models/base/exp_nonpositive.h"

namespace seed::spec {
namespace {

void check_shape(int64_t contexts, int64_t vocab) {
  SEED_CHECK(contexts >= 1, kInvalidArgument) << "TargetRows: " << contexts << " contexts; a draft has at least one";
  SEED_CHECK(vocab > 0 && vocab <= std::numeric_limits<int32_t>::max(), kInvalidArgument)
      << "TargetRows: vocab must be in [1, 2^31), got " << vocab;
}

}  // namespace

bool needs_whole_row(const SamplingParams& sampling, int64_t vocab) {
  const bool cut_k = sampling.top_k > 0 && sampling.top_k < vocab;
  return sampling.greedy() || cut_k || sampling.top_p < 1.0f;
}

TargetRows::TargetRows(const float* logits, int64_t contexts, int64_t vocab, const SamplingParams& sampling)
    : logits_(logits), vocab_(vocab), sampling_(sampling) {
  SEED_CHECK(logits != nullptr, kInvalidArgument) << "TargetRows: logits is null";
  check_shape(contexts, vocab);
  sampling_.validate();
  contexts_.resize(static_cast<size_t>(contexts));
}

TargetRows::TargetRows(LogitSummary summary, int64_t vocab, const SamplingParams& sampling)
    : summary_(std::move(summary)), vocab_(vocab), sampling_(sampling) {
  SEED_CHECK(summarised(), kInvalidArgument) << "TargetRows: the logit summary has no copy_row";
  check_shape(static_cast<int64_t>(summary_.contexts.size()), vocab);
  sampling_.validate();
  contexts_.resize(summary_.contexts.size());
}

const float* TargetRows::logits_of(int64_t context) const { return logits_ + context * vocab_; }

TargetRows::Context& TargetRows::at(int64_t context) {
  SEED_CHECK(context >= 0 && context < this->contexts(), kInvalidArgument)
      << "TargetRows: context " << context << " outside [0, " << this->contexts() << ")";
  return contexts_[static_cast<size_t>(context)];
}

const SoftmaxScale& TargetRows::summary_of(int64_t context) const {
  SEED_CHECK(context >= 0 && context < this->contexts(), kInvalidArgument)
      << "TargetRows: context " << context << " outside [0, " << this->contexts() << ")";
  const SoftmaxScale& s = summary_.contexts[static_cast<size_t>(context)];
  SEED_CHECK(std::isfinite(s.max_logit), kInvalidArgument)
      << "the largest logit of context " << context << " is " << s.max_logit
      << "; the model produced non-finite values or masked every token";
  SEED_CHECK(needs_row() || s.scale > 0.0f, kInternal)
      << "TargetRows: the summary of context " << context << " has no softmax scale for temperature sampling";
  return s;
}

void TargetRows::summary_row(int64_t context, std::vector<float>& row) const {
  const SoftmaxScale& s = summary_of(context);
  if (sampling_.greedy()) {
    std::fill(row.begin(), row.end(), 0.0f);
    row[static_cast<size_t>(s.argmax)] = 1.0f;
    return;
  }
  if (needs_row()) {
    std::vector<float> logits(static_cast<size_t>(vocab_));
    summary_.copy_row(context, logits.data());
    sampling_distribution(logits.data(), vocab_, sampling_, row.data());
    return;
  }
  // p(x) as prob() computes it at drafted tokens, with the summary's scale.
  summary_.copy_row(context, row.data());
  for (float& x : row) x = exp_nonpositive((x - s.max_logit) / sampling_.temperature) * s.scale;
}

float TargetRows::prob(int64_t context, int32_t token) {
  SEED_CHECK(token >= 0 && token < vocab_, kInvalidArgument)
      << "TargetRows: token " << token << " outside the vocab [0, " << vocab_ << ")";
  if (needs_row()) return row(context)[token];
  Context& c = at(context);
  if (!c.row.empty()) return c.row[static_cast<size_t>(token)];
  if (summarised()) {
    const SoftmaxScale& s = summary_of(context);
    for (const DraftedLogit& d : summary_.drafted) {
      if (d.context == context && d.token == token) {
        return exp_nonpositive((d.logit - s.max_logit) / sampling_.temperature) * s.scale;
      }
    }
    return row(context)[token];
  }
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
    if (summarised()) {
      summary_row(context, c.row);
    } else {
      sampling_distribution(logits_of(context), vocab_, sampling_, c.row.data());
    }
  }
  return c.row.data();
}

int32_t TargetRows::argmax(int64_t context) {
  if (summarised() && sampling_.greedy()) return summary_of(context).argmax;
  return seed::argmax(row(context), vocab_);
}

}  // namespace seed::spec
