#include "spec/api/target_rows.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
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

TopTokens top_entries(const float* probs, int64_t vocab, int k) {
  std::vector<int32_t> ids;
  for (int64_t v = 0; v < vocab; ++v) {
    if (probs[v] > 0.0f) ids.push_back(static_cast<int32_t>(v));
  }
  const auto better = [&](int32_t a, int32_t b) { return probs[a] > probs[b] || (probs[a] == probs[b] && a < b); };
  const size_t keep = std::min(ids.size(), static_cast<size_t>(std::max(k, 0)));
  std::partial_sort(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(keep), ids.end(), better);
  ids.resize(keep);
  TopTokens top;
  top.ids = ids;
  for (const int32_t id : ids) top.probs.push_back(probs[id]);
  return top;
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
  SEED_CHECK(summarised(), kInvalidArgument) << "TargetRows: the logit summary has no rows";
  check_shape(static_cast<int64_t>(summary_.contexts.size()), vocab);
  sampling_.validate();
  contexts_.resize(summary_.contexts.size());
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

const RowSummary& TargetRows::summary_of(int64_t context) const {
  SEED_CHECK(context >= 0 && context < this->contexts(), kInvalidArgument)
      << "TargetRows: context " << context << " outside [0, " << this->contexts() << ")";
  const RowSummary& s = summary_.contexts[static_cast<size_t>(context)];
  SEED_CHECK(std::isfinite(s.softmax.max_logit), kInvalidArgument)
      << "the largest logit of context " << context << " is " << s.softmax.max_logit
      << "; the model produced non-finite values or masked every token";
  SEED_CHECK(sampling_.greedy() || s.softmax.scale > 0.0f, kInternal)
      << "TargetRows: the summary of context " << context << " has no softmax scale for sampling";
  return s;
}

float TargetRows::summary_prob(const RowSummary& s, int32_t token, float logit) const {
  if (!s.keeps(token, logit)) return 0.0f;
  return exp_nonpositive((logit - s.softmax.max_logit) / sampling_.temperature) * s.softmax.scale;
}

void TargetRows::summary_row(int64_t context, std::vector<float>& row) const {
  const RowSummary& s = summary_of(context);
  if (sampling_.greedy()) {
    std::fill(row.begin(), row.end(), 0.0f);
    row[static_cast<size_t>(s.softmax.argmax)] = 1.0f;
    return;
  }
  // p(x) as prob() computes it at single tokens, from the summary.
  summary_.rows->copy_row(summary_.first_row + context, row.data());
  for (int32_t v = 0; v < vocab_; ++v) row[static_cast<size_t>(v)] = summary_prob(s, v, row[static_cast<size_t>(v)]);
}

float TargetRows::prob(int64_t context, int32_t token) {
  SEED_CHECK(token >= 0 && token < vocab_, kInvalidArgument)
      << "TargetRows: token " << token << " outside the vocab [0, " << vocab_ << ")";
  Context& c = at(context);
  if (!c.row.empty()) return c.row[static_cast<size_t>(token)];
  if (summarised()) {
    if (sampling_.greedy()) return row(context)[token];
    const RowSummary& s = summary_of(context);
    const auto& logits = summary_.token_logits;
    const auto it = std::lower_bound(logits.begin(), logits.end(), TokenLogit{context, token}, TokenLogit::before);
    if (it != logits.end() && it->context == context && it->token == token) return summary_prob(s, token, it->logit);
    const auto top = summary_.top_logits.begin() + context * summary_.top;
    const auto in_top = std::find_if(top, top + summary_.top, [&](const TokenLogit& t) { return t.token == token; });
    if (in_top != top + summary_.top) return summary_prob(s, token, in_top->logit);
    return row(context)[token];
  }
  if (needs_row()) return row(context)[token];
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
  if (summarised() && sampling_.greedy()) return summary_of(context).softmax.argmax;
  return seed::argmax(row(context), vocab_);
}

TopTokens TargetRows::top(int64_t context, int k) {
  if (!summarised() || sampling_.greedy() || k > summary_.top) return top_entries(row(context), vocab_, k);
  const RowSummary& s = summary_of(context);
  TopTokens top;
  const auto first = summary_.top_logits.begin() + context * summary_.top;
  for (auto it = first; it != first + std::max(k, 0); ++it) {
    const float p = summary_prob(s, it->token, it->logit);
    if (p <= 0.0f) break;  // the rest are cut too
    top.ids.push_back(it->token);
    top.probs.push_back(p);
  }
  return top;
}

RowDraw TargetRows::row_draw(const FinalDraw& draw) const {
  return {summary_.first_row + draw.context, sampling_.temperature, summary_of(draw.context), &draw.residual, draw.u,
          draw.race};
}

int32_t TargetRows::draw(const FinalDraw& draw) {
  if (draws_remotely()) return summary_.rows->draw({row_draw(draw)}).front();
  const float* p = row(draw.context);
  const Residual& r = draw.residual;
  if (draw.race) {
    SEED_CHECK(r.is_p(), kInternal) << "TargetRows: a race is run over p, not a residual";
    return race_from(p, vocab_, *draw.race);
  }
  if (r.is_p()) return sample_from(p, vocab_, draw.u);
  std::vector<float> residual(static_cast<size_t>(vocab_));
  for (int64_t v = 0; v < vocab_; ++v) residual[static_cast<size_t>(v)] = static_cast<float>(r.rest * p[v]);
  for (size_t j = 0; j < r.ids.size(); ++j) residual[static_cast<size_t>(r.ids[j])] = static_cast<float>(r.values[j]);
  return sample_from(residual.data(), vocab_, draw.u);
}

int32_t TargetRows::sample(int64_t context, uint64_t stream) {
  Context& c = at(context);
  if (c.sampled < 0) c.sampled = draw(FinalDraw{context, Residual{}, 0.0, stream});
  return c.sampled;
}

void TargetRows::set_sample(int64_t context, int32_t token) {
  SEED_CHECK(token >= 0 && token < vocab_, kInvalidArgument)
      << "TargetRows: token " << token << " outside the vocab [0, " << vocab_ << ")";
  at(context).sampled = token;
}

std::vector<int32_t> draw_final_tokens(const std::vector<TargetRows*>& targets,
                                       const std::vector<const FinalDraw*>& draws) {
  SEED_CHECK(targets.size() == draws.size(), kInternal)
      << "draw_final_tokens: " << targets.size() << " targets for " << draws.size() << " draws";
  std::vector<int32_t> tokens(draws.size(), -1);
  // Per LogitRows, the draws made there and whose they are.
  std::vector<std::pair<const LogitRows*, std::vector<size_t>>> remote;
  for (size_t i = 0; i < draws.size(); ++i) {
    if (!targets[i]->draws_remotely()) {
      tokens[i] = targets[i]->draw(*draws[i]);
      continue;
    }
    const LogitRows* rows = targets[i]->summary_.rows.get();
    auto group = std::find_if(remote.begin(), remote.end(), [rows](const auto& g) { return g.first == rows; });
    if (group == remote.end()) group = remote.insert(remote.end(), {rows, {}});
    group->second.push_back(i);
  }
  for (const auto& [rows, members] : remote) {
    std::vector<RowDraw> batch;
    for (const size_t i : members) batch.push_back(targets[i]->row_draw(*draws[i]));
    const std::vector<int32_t> drawn = rows->draw(batch);
    for (size_t j = 0; j < members.size(); ++j) tokens[members[j]] = drawn[j];
  }
  return tokens;
}

}  // namespace seed::spec
