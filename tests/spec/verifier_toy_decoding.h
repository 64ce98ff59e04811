// Speculative decoding on the toy pair of verifier_toy_pair.h, as an engine
// runs it (draft, verify against the target's rows, append the verdict's
// tokens), and the chi-square p-value of the first generated tokens against
// the target's exact distribution; the drafts it is run with.
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <vector>

#include "tests/spec/chi_square.h"
#include "tests/spec/verifier_toy_pair.h"

namespace seed::spec {

using ::seed::testing::chi_square;
using ::seed::testing::ChiSquare;

// Chi-square tests fail only if the fit is worse than 1 run in 1000.
constexpr double kMinPValue = 1e-3;
// Enough to catch a wrong residual by many orders of magnitude (see
// ChiSquareCatchesAVerifierThatResamplesFromP).
constexpr int64_t kTrials = 200000;

using DraftFn = std::function<DraftTree(int32_t state, uint32_t base, uint64_t request)>;

// Speculative decoding as an engine runs it: draft from the current state,
// verify against the target's rows at every context, append the verdict's
// tokens, repeat until `count` tokens are out.
inline std::vector<int32_t> generate(const DraftFn& draft_fn, const VerifyFn& verify_fn, uint64_t request,
                                     size_t count) {
  std::vector<int32_t> out;
  int32_t state = kPrompt;
  while (out.size() < count) {
    const auto base = static_cast<uint32_t>(out.size());
    const DraftTree draft = draft_fn(state, base, request);
    const Verdict verdict = verify_against(kTarget, draft, state, {}, kSeed, request, base, verify_fn);
    out.insert(out.end(), verdict.tokens.begin(), verdict.tokens.end());
    state = out.back();
  }
  out.resize(count);
  return out;
}

// p-value of the first `count` (1 or 2) generated tokens, over kTrials
// requests, against the target's exact joint p(x1) p(x2 | x1).
inline double generated_p_value(const char* name, const DraftFn& draft_fn, const VerifyFn& verify_fn, size_t count) {
  const size_t categories = count == 1 ? kVocab : kVocab * kVocab;
  std::vector<int64_t> counts(categories, 0);
  for (int64_t trial = 0; trial < kTrials; ++trial) {
    const std::vector<int32_t> tokens = generate(draft_fn, verify_fn, static_cast<uint64_t>(trial), count);
    ++counts[count == 1 ? tokens[0] : tokens[0] * kVocab + tokens[1]];
  }
  std::vector<double> expected(categories);
  for (size_t i = 0; i < categories; ++i) {
    expected[i] = count == 1
                      ? kTarget[kPrompt][i]
                      : static_cast<double>(kTarget[kPrompt][i / kVocab]) * kTarget[i / kVocab][i % kVocab];
  }
  const ChiSquare fit = chi_square(counts, expected, kTrials);
  std::printf("%s: first %zu token(s), %lld trials: chi-square %.4g (%d dof), p = %.4g\n", name, count,
              static_cast<long long>(kTrials), fit.statistic, fit.dof, fit.p_value);
  return fit.p_value;
}

inline DraftFn sampled(const std::vector<int>& k_config, Cut cut = {}) {
  return [k_config, cut](int32_t state, uint32_t base, uint64_t request) {
    return sample_tree(kDraft, k_config, state, base, request, cut);
  };
}

// A lookup drafter's fixed tree: 2 (impossible for the target at the
// prompt), 0 and 5 at the root, and 1 after 0.
const DraftFn kLookupTree = [](int32_t, uint32_t, uint64_t) {
  DraftTree draft;
  draft.tokens = {2, 0, 5, 1};
  draft.parents = {-1, -1, -1, 1};
  draft.deterministic = true;
  return draft;
};

}  // namespace seed::spec
