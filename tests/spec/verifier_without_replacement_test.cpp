// The tree rule for children drawn without replacement (STAND's
// Gumbel-top-k drafts): lossless by chi-square over two tokens, and the
// i.i.d. rule on the same drafts is detectably not (so the test has power).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <utility>
#include <vector>

#include "models/base/counter_rng.h"
#include "models/base/error.h"
#include "spec/api/gumbel_top_k.h"
#include "spec/api/verifier.h"
#include "tests/spec/chi_square.h"
#include "tests/throws_error.h"

namespace seed::spec {
namespace {

constexpr int64_t kVocab = 5;
constexpr int64_t kTrials = 200000;
// Next-token rows by the last token (index kVocab: the prompt). The draft
// is far from the target: its top candidates are the target's least likely.
constexpr float kTarget[kVocab + 1][kVocab] = {
    {0.40f, 0.30f, 0.10f, 0.10f, 0.10f}, {0.10f, 0.10f, 0.20f, 0.30f, 0.30f}, {0.20f, 0.20f, 0.20f, 0.20f, 0.20f},
    {0.05f, 0.05f, 0.10f, 0.30f, 0.50f}, {0.30f, 0.30f, 0.20f, 0.10f, 0.10f}, {0.05f, 0.10f, 0.15f, 0.30f, 0.40f},
};
constexpr float kDraft[kVocab + 1][kVocab] = {
    {0.05f, 0.15f, 0.30f, 0.30f, 0.20f}, {0.50f, 0.30f, 0.10f, 0.05f, 0.05f}, {0.10f, 0.10f, 0.10f, 0.30f, 0.40f},
    {0.40f, 0.40f, 0.10f, 0.05f, 0.05f}, {0.05f, 0.05f, 0.30f, 0.30f, 0.30f}, {0.45f, 0.30f, 0.15f, 0.10f, 0.00f},
};

// The draft's row after `last`: its `keep` most likely tokens renormalised
// (a truncated q, as STAND's top entries are), zeros elsewhere.
std::vector<float> draft_row(int32_t last, int keep) {
  std::vector<float> q(kDraft[last], kDraft[last] + kVocab);
  std::vector<float> sorted = q;
  std::sort(sorted.begin(), sorted.end(), std::greater<float>());
  const float least = sorted[static_cast<size_t>(keep - 1)];
  double mass = 0.0;
  for (float& v : q) {
    if (v < least) v = 0.0f;
    mass += v;
  }
  for (float& v : q) v = static_cast<float>(v / mass);
  return q;
}

// A dense row by its support.
DraftRow support(const std::vector<float>& q) {
  TopTokens r = top_entries(q.data(), kVocab, kVocab);
  return {std::move(r.ids), std::move(r.probs)};
}

// A tree of `k[0]` children of the prefix (after `last`), each with k[1]
// children, drawn without replacement by Gumbel-top-k from the draft's
// top `keep` tokens, verified with p.
Verdict round(int32_t last, const std::vector<int>& k, uint64_t trial, uint32_t position, bool without_replacement,
              int keep) {
  DraftTree draft;
  draft.without_replacement = without_replacement;
  std::vector<int32_t> p_rows = {last};
  draft.q = {support(draft_row(last, keep))};
  const auto children = [&](int32_t parent, int32_t context_last, int m, uint32_t at) {
    const std::vector<float> q = draft_row(context_last, keep);
    std::vector<double> u(kVocab);
    for (int64_t i = 0; i < kVocab; ++i) {
      u[static_cast<size_t>(i)] =
          uniform({1, trial, at, RngPurpose::kDraft, static_cast<uint32_t>((parent + 1) * kVocab + i)});
    }
    for (const int x : gumbel_top_k(q, u, m)) {
      draft.tokens.push_back(x);
      draft.parents.push_back(parent);
    }
  };
  children(-1, last, k[0], position);
  const int32_t level1 = static_cast<int32_t>(draft.tokens.size());
  for (int32_t node = 0; node < level1 && k.size() > 1; ++node) {
    children(node, draft.tokens[static_cast<size_t>(node)], k[1], position + 1);
  }
  // Rows for every context: q and p after each node (p as logits, log p).
  for (size_t node = 0; node < draft.tokens.size(); ++node) {
    draft.q.push_back(support(draft_row(draft.tokens[node], keep)));
    p_rows.push_back(draft.tokens[node]);
  }
  std::vector<float> logits;
  for (const int32_t r : p_rows) {
    for (int64_t v = 0; v < kVocab; ++v) logits.push_back(std::log(kTarget[r][v]));
  }
  TargetRows target(logits.data(), static_cast<int64_t>(p_rows.size()), kVocab, SamplingParams{});
  return verify({&draft, &target, 1, trial, position});
}

// Two tokens after the prompt, as an engine makes them: a second round when
// the first gave one token.
std::vector<int64_t> two_token_counts(const std::vector<int>& k, bool without_replacement, int keep = kVocab) {
  std::vector<int64_t> counts(kVocab * kVocab, 0);
  for (int64_t t = 0; t < kTrials; ++t) {
    std::vector<int32_t> out = round(kVocab, k, static_cast<uint64_t>(t), 0, without_replacement, keep).tokens;
    if (out.size() < 2) {
      const Verdict next = round(out[0], k, static_cast<uint64_t>(t), 1, without_replacement, keep);
      out.push_back(next.tokens[0]);
    }
    ++counts[static_cast<size_t>(out[0] * kVocab + out[1])];
  }
  return counts;
}

std::vector<double> two_token_target() {
  std::vector<double> expected(kVocab * kVocab);
  for (int64_t a = 0; a < kVocab; ++a) {
    for (int64_t b = 0; b < kVocab; ++b) {
      expected[static_cast<size_t>(a * kVocab + b)] = kTarget[kVocab][a] * kTarget[a][b];
    }
  }
  return expected;
}

TEST(VerifierWithoutReplacementTest, TreesDrawnWithoutReplacementAreLossless) {
  for (const std::vector<int>& k : {std::vector<int>{3, 2}, std::vector<int>{4, 1}, std::vector<int>{2}}) {
    const auto fit = ::seed::testing::chi_square(two_token_counts(k, true), two_token_target(), kTrials);
    EXPECT_GT(fit.p_value, 1e-3) << "k = " << k[0] << ": chi-square " << fit.statistic << " (" << fit.dof << " dof)";
  }
}

TEST(VerifierWithoutReplacementTest, TruncatedRowsDrawnWithoutReplacementAreLossless) {
  for (const std::vector<int>& k : {std::vector<int>{3, 2}, std::vector<int>{2}}) {
    const auto fit = ::seed::testing::chi_square(two_token_counts(k, true, 3), two_token_target(), kTrials);
    EXPECT_GT(fit.p_value, 1e-3) << "k = " << k[0] << ", top 3: chi-square " << fit.statistic << " (" << fit.dof
                                 << " dof)";
  }
}

TEST(VerifierWithoutReplacementTest, TheIidRuleOnTheseDraftsIsNot) {
  const auto fit = ::seed::testing::chi_square(two_token_counts({4, 1}, false), two_token_target(), kTrials);
  EXPECT_LT(fit.p_value, 1e-6) << "chi-square " << fit.statistic;
}

TEST(VerifierWithoutReplacementTest, RepeatedSiblingsAreRejected) {
  DraftTree draft;
  draft.without_replacement = true;
  draft.tokens = {1, 1};
  draft.parents = {-1, -1};
  draft.q = {{{1}, {1.0f}}, {}, {}};
  // p is one-hot at token 0 everywhere, so token 1 is always rejected.
  std::vector<float> logits(3 * kVocab, -std::numeric_limits<float>::infinity());
  for (int c = 0; c < 3; ++c) logits[static_cast<size_t>(c * kVocab)] = 0.0f;
  TargetRows target(logits.data(), 3, kVocab, SamplingParams{});
  EXPECT_TRUE(::seed::testing::throws_error([&] { verify({&draft, &target, 1, 0, 0}); },
                                            ErrorKind::kInvalidArgument, {"node 1", "distinct"}));
}

}  // namespace
}  // namespace seed::spec
