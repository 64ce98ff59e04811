#include "parallel/wire_spec_values.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "models/base/error.h"
#include "spec/drafters/lesson.h"

namespace seed::parallel::wire {

namespace {

// A draft's flags.
constexpr uint8_t kDeterministic = 1, kWithoutReplacement = 2;
// Bounds on a proposal's q rows: token ids are below kMaxVocab (the largest
// vocabularies seed loads have 262k tokens), and a row sums to 1 within
// kRowMassTolerance (float rounding over at most kMaxVocab entries).
constexpr uint32_t kMaxVocab = uint32_t{1} << 20;
constexpr double kRowMassTolerance = 1e-3;

// The q rows a proposal sends: contexts (0 = the prefix, i + 1 = after
// node i) that have children, in order.
std::vector<size_t> sent_contexts(const std::vector<int32_t>& parents) {
  std::vector<bool> has(parents.size() + 1, false);
  for (int32_t parent : parents) has[static_cast<size_t>(parent + 1)] = true;
  std::vector<size_t> contexts;
  for (size_t c = 0; c < has.size(); ++c) {
    if (has[c]) contexts.push_back(c);
  }
  return contexts;
}

// (ids [i32], probs [f32]): a count, the ids, then as many probs.
void put_pairs(Writer& w, const std::vector<int32_t>& ids, const std::vector<float>& probs, const char* field) {
  SEED_CHECK(ids.size() == probs.size(), kInvalidArgument)
      << "wire: " << field << " has " << ids.size() << " ids but " << probs.size() << " probs";
  w.put_array(ids, field);
  w.put_raw(probs.data(), probs.size());
}

void get_pairs(Reader& r, std::vector<int32_t>& ids, std::vector<float>& probs, const char* ids_field,
               const char* probs_field) {
  ids = r.get_array<int32_t>(ids_field);
  probs.resize(ids.size());
  r.get_raw(probs.data(), probs.size(), probs_field);
}

// Throws unless `row` is a distribution by its support (DraftRow): ids
// distinct and below kMaxVocab, probs in (0, 1], summing to 1.
void check_row(Reader& r, const spec::DraftRow& row, size_t context) {
  double mass = 0.0;
  for (size_t j = 0; j < row.ids.size(); ++j) {
    if (row.ids[j] < 0 || static_cast<uint32_t>(row.ids[j]) >= kMaxVocab) {
      detail::Raiser() & r.fail() << "q row " << context << " names token " << row.ids[j] << ", outside [0, "
                                  << kMaxVocab << ")";
    }
    if (!(row.probs[j] > 0.0f && row.probs[j] <= 1.0f)) {
      detail::Raiser() & r.fail() << "q row " << context << " gives token " << row.ids[j] << " probability "
                                  << row.probs[j] << ", outside (0, 1]";
    }
    mass += row.probs[j];
  }
  if (!(std::abs(mass - 1.0) <= kRowMassTolerance)) {
    detail::Raiser() & r.fail() << "q row " << context << " sums to " << mass << ", not 1";
  }
  std::vector<int32_t> sorted = row.ids;
  std::sort(sorted.begin(), sorted.end());
  const auto repeat = std::adjacent_find(sorted.begin(), sorted.end());
  if (repeat != sorted.end()) detail::Raiser() & r.fail() << "q row " << context << " names token " << *repeat << " twice";
}

void put_target_top(Writer& w, const std::vector<spec::TopTokens>& target_top) {
  w.put_count(target_top.size(), "target_top");
  for (const spec::TopTokens& top : target_top) put_pairs(w, top.ids, top.probs, "target_top ids");
}

std::vector<spec::TopTokens> get_target_top(Reader& r) {
  const uint32_t tops = r.get<uint32_t>("target_top");
  r.need(uint64_t{tops} * sizeof(uint32_t), "target_top");  // each at least a count
  std::vector<spec::TopTokens> target_top(tops);
  for (spec::TopTokens& top : target_top) get_pairs(r, top.ids, top.probs, "target_top ids", "target_top probs");
  return target_top;
}

}  // namespace

void put_settings(Writer& w, const spec::DraftSettings& s) {
  w.put(s.sampling.temperature);
  w.put(s.sampling.top_k);
  w.put(s.sampling.top_p);
  w.put(s.seed);
  w.put(s.stream);
  w.put_array(std::vector<int32_t>(s.k_config.begin(), s.k_config.end()), "k_config");
  w.put(s.group);
  w.put(static_cast<uint8_t>(s.pruned.has_value()));
  const spec::PrunedTree pruned = s.pruned.value_or(spec::PrunedTree{});
  w.put(pruned.expand);
  w.put(pruned.prune);
  w.put(static_cast<uint8_t>(s.sample_drafts));
}

spec::DraftSettings get_settings(Reader& r) {
  spec::DraftSettings s;
  s.sampling.temperature = r.get<float>("temperature");
  s.sampling.top_k = r.get<int32_t>("top_k");
  s.sampling.top_p = r.get<float>("top_p");
  s.seed = r.get<uint64_t>("seed");
  s.stream = r.get<uint64_t>("stream");
  const std::vector<int32_t> k_config = r.get_array<int32_t>("k_config");
  s.k_config.assign(k_config.begin(), k_config.end());
  s.group = r.get<uint64_t>("group");
  const bool pruned = r.get<uint8_t>("pruned") != 0;
  spec::PrunedTree rule;
  rule.expand = r.get<float>("pruned expand");
  rule.prune = r.get<float>("pruned prune");
  if (pruned) s.pruned = rule;
  s.sample_drafts = r.get<uint8_t>("sample_drafts") != 0;
  return s;
}

void put_draft(Writer& w, const spec::DraftTree& d) {
  const size_t n = d.tokens.size();
  SEED_CHECK(d.parents.size() == n, kInvalidArgument)
      << "wire: a proposal has " << n << " tokens but " << d.parents.size() << " parents";
  for (size_t i = 0; i < n; ++i) {
    SEED_CHECK(d.parents[i] >= -1 && d.parents[i] < static_cast<int32_t>(i), kInvalidArgument)
        << "wire: proposal node " << i << " has parent " << d.parents[i] << ", not an earlier node";
  }
  const bool rows = !d.deterministic && n > 0;
  SEED_CHECK(rows ? d.q.size() == n + 1 : d.q.empty() || n == 0, kInvalidArgument)
      << "wire: a proposal's q has " << d.q.size() << " rows, not n + 1 = " << n + 1
      << (d.deterministic ? " (a deterministic draft sends none)" : "");
  w.put_array(d.tokens, "tokens");
  w.put_raw(d.parents.data(), n);  // as many as tokens
  w.put(static_cast<uint8_t>((d.deterministic ? kDeterministic : 0) | (d.without_replacement ? kWithoutReplacement : 0)));
  if (rows) {
    for (const size_t context : sent_contexts(d.parents)) {
      put_pairs(w, d.q[context].ids, d.q[context].probs, "q row");
    }
  }
  SEED_CHECK(d.confidence.empty() || d.confidence.size() == n, kInvalidArgument)
      << "wire: a proposal has " << d.confidence.size() << " confidences for " << n << " tokens";
  w.put_array(d.confidence, "confidence");
}

spec::DraftTree get_draft(Reader& r) {
  spec::DraftTree d;
  d.tokens = r.get_array<int32_t>("tokens");
  d.parents.resize(d.tokens.size());
  r.get_raw(d.parents.data(), d.parents.size(), "parents");
  for (size_t i = 0; i < d.parents.size(); ++i) {
    if (d.parents[i] < -1 || d.parents[i] >= static_cast<int32_t>(i)) {
      detail::Raiser() & r.fail() << "node " << i << " has parent " << d.parents[i] << ", not an earlier node";
    }
  }
  const uint8_t flags = r.get<uint8_t>("flags");
  if ((flags & ~(kDeterministic | kWithoutReplacement)) != 0) {
    detail::Raiser() & r.fail() << "unknown proposal flags " << int{flags};
  }
  d.deterministic = (flags & kDeterministic) != 0;
  d.without_replacement = (flags & kWithoutReplacement) != 0;
  if (!d.deterministic && !d.tokens.empty()) {
    d.q.resize(d.tokens.size() + 1);
    for (const size_t context : sent_contexts(d.parents)) {
      spec::DraftRow& row = d.q[context];
      get_pairs(r, row.ids, row.probs, "q ids", "q probs");
      check_row(r, row, context);
    }
    for (size_t i = 0; i < d.tokens.size(); ++i) {
      if (!(d.q[static_cast<size_t>(d.parents[i] + 1)].prob(d.tokens[i]) > 0.0f)) {
        detail::Raiser() & r.fail() << "node " << i << "'s token " << d.tokens[i] << " has no probability in q row "
                                    << d.parents[i] + 1 << ", which it was drawn from";
      }
    }
  }
  d.confidence = r.get_array<float>("confidence");
  if (!d.confidence.empty() && d.confidence.size() != d.tokens.size()) {
    detail::Raiser() & r.fail() << d.confidence.size() << " confidences for " << d.tokens.size() << " tokens";
  }
  return d;
}

spec::DrafterKind get_drafter_kind(Reader& r) {
  const uint8_t drafter = r.get<uint8_t>("drafter");
  if (drafter >= spec::kDrafterKinds.size()) detail::Raiser() & r.fail() << "unknown drafter kind " << int{drafter};
  return spec::kDrafterKinds[drafter];
}

void put_verdict(Writer& w, const spec::Verdict& v) {
  w.put_array(v.accepted, "accepted");
  w.put(v.bonus);
  w.put_array(v.tokens, "tokens");
  put_target_top(w, v.target_top);
  w.put(v.hidden_from);
  w.put_array(v.hidden, "hidden");
}

spec::Verdict get_verdict(Reader& r) {
  spec::Verdict v;
  v.accepted = r.get_array<int32_t>("accepted");
  v.bonus = r.get<int32_t>("bonus");
  v.tokens = r.get_array<int32_t>("tokens");
  v.target_top = get_target_top(r);
  v.hidden_from = r.get<int64_t>("hidden_from");
  if (v.hidden_from < 0) detail::Raiser() & r.fail() << "hidden_from " << v.hidden_from << " < 0";
  v.hidden = r.get_array<float>("hidden");
  return v;
}

void put_lesson(Writer& w, spec::DrafterKind drafter, const spec::Lesson& l) {
  SEED_CHECK(l.target_top.size() <= l.tokens.size(), kInvalidArgument)
      << "wire: a lesson has " << l.target_top.size() << " target distributions for " << l.tokens.size() << " tokens";
  w.put(static_cast<uint8_t>(drafter.value()));
  w.put(l.group);
  w.put_array(l.context, "context");
  w.put_array(l.tokens, "tokens");
  put_target_top(w, l.target_top);
}

LessonMessage get_lesson(Reader& r) {
  LessonMessage m;
  m.drafter = get_drafter_kind(r);
  if (spec::lesson_context(m.drafter) == 0) {
    detail::Raiser() & r.fail() << "drafter '" << m.drafter.name() << "' keeps no group table to learn into";
  }
  m.lesson.group = r.get<uint64_t>("group");
  m.lesson.context = r.get_array<int32_t>("context");
  if (m.lesson.context.size() > spec::lesson_context(m.drafter)) {
    detail::Raiser() & r.fail() << m.lesson.context.size() << " context tokens, more than the "
                                << spec::lesson_context(m.drafter) << " a " << m.drafter.name() << " lesson carries";
  }
  m.lesson.tokens = r.get_array<int32_t>("tokens");
  m.lesson.target_top = get_target_top(r);
  if (m.lesson.target_top.size() > m.lesson.tokens.size()) {
    detail::Raiser() & r.fail() << m.lesson.target_top.size() << " target distributions for "
                                << m.lesson.tokens.size() << " tokens";
  }
  return m;
}

}  // namespace seed::parallel::wire
