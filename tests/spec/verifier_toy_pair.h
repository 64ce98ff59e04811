// A toy language pair for the verifier tests: target and draft tables over 6
// tokens whose next-token distribution depends only on the last token, the
// target's rows at each context of a draft as logits, draft trees grown as a
// sampling drafter grows them (from the whole q or a top-k / top-p cut of
// it), and the verdict of a draft against the target's rows, with a check
// that two verdicts agree.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "models/base/counter_rng.h"
#include "models/base/sampling.h"
#include "spec/api/verifier.h"

namespace seed::spec {

constexpr uint64_t kSeed = 20240917;

// A toy language pair over 6 tokens whose next-token distribution depends
// only on the last token; state kPrompt is the prompt (no token yet). The
// draft is deliberately far from the target: it puts mass where the target
// has none (token 2 at the prompt) and none where the target has much
// (token 5), so the residual carries most of the target's mass.
constexpr int32_t kVocab = 6;
constexpr int32_t kPrompt = kVocab;
constexpr float kTarget[kVocab + 1][kVocab] = {
    {0.50f, 0.10f, 0.10f, 0.10f, 0.10f, 0.10f},  // after 0
    {0.10f, 0.20f, 0.30f, 0.40f, 0.00f, 0.00f},  // after 1
    {0.20f, 0.20f, 0.20f, 0.20f, 0.10f, 0.10f},  // after 2
    {0.00f, 0.05f, 0.05f, 0.10f, 0.30f, 0.50f},  // after 3
    {0.30f, 0.30f, 0.10f, 0.10f, 0.10f, 0.10f},  // after 4
    {0.15f, 0.15f, 0.15f, 0.15f, 0.15f, 0.25f},  // after 5
    {0.05f, 0.30f, 0.00f, 0.25f, 0.15f, 0.25f},  // prompt
};
constexpr float kDraft[kVocab + 1][kVocab] = {
    {0.05f, 0.35f, 0.20f, 0.20f, 0.10f, 0.10f},  // after 0
    {0.40f, 0.30f, 0.10f, 0.05f, 0.10f, 0.05f},  // after 1
    {0.10f, 0.10f, 0.10f, 0.10f, 0.30f, 0.30f},  // after 2
    {0.35f, 0.35f, 0.10f, 0.10f, 0.05f, 0.05f},  // after 3
    {0.05f, 0.05f, 0.40f, 0.40f, 0.05f, 0.05f},  // after 4
    {0.50f, 0.10f, 0.10f, 0.10f, 0.10f, 0.10f},  // after 5
    {0.40f, 0.05f, 0.30f, 0.05f, 0.20f, 0.00f},  // prompt
};
using Table = const float (*)[kVocab];
using VerifyFn = std::function<Verdict(const VerifyRequest&)>;

// [(n + 1) x kVocab] rows of `table` at each context of `draft` grown from
// `state`, as logits: log p, whose softmax is p (zeros masked as -inf).
inline std::vector<float> context_logits(Table table, const DraftTree& draft, int32_t state) {
  std::vector<float> rows;
  const auto add = [&rows](const float* row) {
    for (int32_t v = 0; v < kVocab; ++v) rows.push_back(std::log(row[v]));
  };
  add(table[state]);
  for (const int32_t token : draft.tokens) add(table[token]);
  return rows;
}

// A draft's cut of a table row: the row's own distribution with top_k and
// top_p applied (sampling_distribution of its logs), by its support.
struct Cut {
  int32_t top_k = 0;
  float top_p = 1.0f;
};
inline DraftRow cut_row(const float* row, Cut cut) {
  std::vector<float> logits(kVocab), dense(kVocab);
  for (int32_t v = 0; v < kVocab; ++v) logits[static_cast<size_t>(v)] = std::log(row[v]);
  sampling_distribution(logits.data(), kVocab, SamplingParams{1.0f, cut.top_k, cut.top_p}, dense.data());
  TopTokens q = top_entries(dense.data(), kVocab, kVocab);
  return {std::move(q.ids), std::move(q.probs)};
}

// The verdict for `draft` against `table`'s rows from `state`.
inline Verdict verify_against(Table table, const DraftTree& draft, int32_t state, const SamplingParams& sampling,
                              uint64_t seed, uint64_t request, uint32_t base, const VerifyFn& verify_fn = verify) {
  const std::vector<float> logits = context_logits(table, draft, state);
  TargetRows target(logits.data(), static_cast<int64_t>(draft.tokens.size()) + 1, kVocab, sampling);
  return verify_fn(VerifyRequest{&draft, &target, seed, request, base});
}

// A draft tree as a sampling drafter grows it: level d has k_config[d]
// children under every node of level d - 1, each drawn from `table` with its
// own kDraft key (position of the token, index = node id), nodes in
// breadth-first order; from `cut` of the table's rows.
inline DraftTree sample_tree(Table table, const std::vector<int>& k_config, int32_t state, uint32_t base,
                             uint64_t request, Cut cut = {}) {
  DraftTree draft;
  draft.q.push_back(cut_row(table[state], cut));
  std::vector<int32_t> level = {-1};
  for (size_t depth = 0; depth < k_config.size(); ++depth) {
    std::vector<int32_t> next;
    for (const int32_t parent : level) {
      for (int k = 0; k < k_config[depth]; ++k) {
        const auto id = static_cast<uint32_t>(draft.tokens.size());
        const double u =
            uniform({kSeed, request, base + static_cast<uint32_t>(depth), RngPurpose::kDraft, id});
        const DraftRow& q = draft.q[static_cast<size_t>(parent + 1)];
        const int32_t j = sample_from(q.probs.data(), static_cast<int64_t>(q.probs.size()), u);
        draft.tokens.push_back(q.ids[static_cast<size_t>(j)]);
        draft.parents.push_back(parent);
        draft.q.push_back(cut_row(table[q.ids[static_cast<size_t>(j)]], cut));
        next.push_back(static_cast<int32_t>(id));

      }
    }
    level = next;
  }
  return draft;
}

inline void expect_same(const Verdict& a, const Verdict& b, uint64_t request) {
  EXPECT_EQ(a.accepted, b.accepted) << "request " << request;
  EXPECT_EQ(a.bonus, b.bonus) << "request " << request;
  EXPECT_EQ(a.tokens, b.tokens) << "request " << request;
}

}  // namespace seed::spec
