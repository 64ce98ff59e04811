// Verifier: the greedy rule on hand-made trees, losslessness of the sampling
// and tree rules by chi-square against a toy target, determinism, the
// matching rule's tokens against sampling alone, and every malformed-draft
// error.
#include "spec/api/verifier.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "models/base/counter_rng.h"
#include "models/base/error.h"
#include "models/base/sampling.h"
#include "tests/spec/chi_square.h"
#include "tests/throws_error.h"

namespace seed::spec {
namespace {

using ::seed::testing::chi_square;
using ::seed::testing::ChiSquare;
using ::seed::testing::throws_error;

// Chi-square tests fail only if the fit is worse than 1 run in 1000.
constexpr double kMinPValue = 1e-3;
// Enough to catch a wrong residual by many orders of magnitude (see
// ChiSquareCatchesAVerifierThatResamplesFromP).
constexpr int64_t kTrials = 200000;
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
std::vector<float> context_logits(Table table, const DraftTree& draft, int32_t state) {
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
DraftRow cut_row(const float* row, Cut cut) {
  std::vector<float> logits(kVocab), dense(kVocab);
  for (int32_t v = 0; v < kVocab; ++v) logits[static_cast<size_t>(v)] = std::log(row[v]);
  sampling_distribution(logits.data(), kVocab, SamplingParams{1.0f, cut.top_k, cut.top_p}, dense.data());
  TopTokens q = top_entries(dense.data(), kVocab, kVocab);
  return {std::move(q.ids), std::move(q.probs)};
}

// The verdict for `draft` against `table`'s rows from `state`.
Verdict verify_against(Table table, const DraftTree& draft, int32_t state, const SamplingParams& sampling,
                       uint64_t seed, uint64_t request, uint32_t base, const VerifyFn& verify_fn = verify) {
  const std::vector<float> logits = context_logits(table, draft, state);
  TargetRows target(logits.data(), static_cast<int64_t>(draft.tokens.size()) + 1, kVocab, sampling);
  return verify_fn(VerifyRequest{&draft, &target, seed, request, base});
}

// A draft tree as a sampling drafter grows it: level d has k_config[d]
// children under every node of level d - 1, each drawn from `table` with its
// own kDraft key (position of the token, index = node id), nodes in
// breadth-first order; from `cut` of the table's rows.
DraftTree sample_tree(Table table, const std::vector<int>& k_config, int32_t state, uint32_t base,
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

using DraftFn = std::function<DraftTree(int32_t state, uint32_t base, uint64_t request)>;

// Speculative decoding as an engine runs it: draft from the current state,
// verify against the target's rows at every context, append the verdict's
// tokens, repeat until `count` tokens are out.
std::vector<int32_t> generate(const DraftFn& draft_fn, const VerifyFn& verify_fn, uint64_t request,
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
double generated_p_value(const char* name, const DraftFn& draft_fn, const VerifyFn& verify_fn, size_t count) {
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

DraftFn sampled(const std::vector<int>& k_config, Cut cut = {}) {
  return [k_config, cut](int32_t state, uint32_t base, uint64_t request) {
    return sample_tree(kDraft, k_config, state, base, request, cut);
  };
}

// A deliberately broken verifier, the classic bug: after rejecting every
// child of the last context it draws the bonus from p instead of the
// residual. The chi-square tests must reject it.
Verdict verify_resampling_from_p(const VerifyRequest& request) {
  Verdict verdict = verify(request);
  const std::vector<int32_t>& parents = request.draft->parents;
  const int32_t context = verdict.accepted.empty() ? 0 : verdict.accepted.back() + 1;
  if (std::count(parents.begin(), parents.end(), context - 1) == 0) return verdict;  // a leaf
  const auto depth = static_cast<uint32_t>(verdict.accepted.size());
  const double u =
      uniform({request.seed, request.request, request.base_position + depth, RngPurpose::kResample, 0});
  verdict.bonus = sample_from(request.target->row(context), request.target->vocab(), u);
  verdict.tokens.back() = verdict.bonus;
  return verdict;
}

// ---- greedy ---------------------------------------------------------------

// Rows one-hot at `best[c]` for each context c, as sampling_distribution
// gives at temperature 0.
std::vector<float> one_hot_rows(const std::vector<int32_t>& best) {
  std::vector<float> rows(best.size() * kVocab, 0.0f);
  for (size_t c = 0; c < best.size(); ++c) rows[c * kVocab + static_cast<size_t>(best[c])] = 1.0f;
  return rows;
}

// `logits` are any rows whose argmax is the target's choice (one-hot ones).
Verdict verify_greedy(const DraftTree& draft, const std::vector<float>& logits) {
  TargetRows target(logits.data(), static_cast<int64_t>(logits.size()) / kVocab, kVocab, SamplingParams{0.0f});
  VerifyRequest request;
  request.draft = &draft;
  request.target = &target;
  return verify(request);
}

TEST(VerifierGreedyTest, AcceptsTheMatchingPrefixOfAChainAndStopsAtTheFirstMismatch) {
  DraftTree draft;
  draft.tokens = {3, 1, 4, 0};
  draft.parents = {-1, 0, 1, 2};
  draft.deterministic = true;
  // The target agrees on 3 and 1, then wants 5 where the draft says 4.
  const Verdict verdict = verify_greedy(draft, one_hot_rows({3, 1, 5, 0, 2}));
  EXPECT_EQ(verdict.accepted, (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(verdict.bonus, 5);
  EXPECT_EQ(verdict.tokens, (std::vector<int32_t>{3, 1, 5}));
}

TEST(VerifierGreedyTest, AcceptsAWholeMatchingChainAndAddsTheBonus) {
  DraftTree draft;
  draft.tokens = {3, 1};
  draft.parents = {-1, 0};
  draft.q = {{{3}, {1.0f}}, {{1}, {1.0f}}, {}};  // a greedy sampling drafter's q is ignored
  const Verdict verdict = verify_greedy(draft, one_hot_rows({3, 1, 2}));
  EXPECT_EQ(verdict.accepted, (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(verdict.tokens, (std::vector<int32_t>{3, 1, 2}));
}

TEST(VerifierGreedyTest, PicksTheMatchingSiblingInATree) {
  // Root children 2 (node 0) and 4 (node 1); node 0 has child 1 (node 2),
  // node 1 has children 0 and 5 (nodes 3, 4). The target wants 4 then 5.
  DraftTree draft;
  draft.tokens = {2, 4, 1, 0, 5};
  draft.parents = {-1, -1, 0, 1, 1};
  draft.deterministic = true;
  const Verdict verdict = verify_greedy(draft, one_hot_rows({4, 1, 5, 3, 3, 0}));
  EXPECT_EQ(verdict.accepted, (std::vector<int32_t>{1, 4}));
  EXPECT_EQ(verdict.bonus, 0);  // argmax p at context 5 (after node 4)
  EXPECT_EQ(verdict.tokens, (std::vector<int32_t>{4, 5, 0}));
}

TEST(VerifierGreedyTest, EmptyDraftGivesJustTheBonus) {
  DraftTree draft;
  draft.deterministic = true;
  const Verdict verdict = verify_greedy(draft, one_hot_rows({4}));
  EXPECT_TRUE(verdict.accepted.empty());
  EXPECT_EQ(verdict.tokens, (std::vector<int32_t>{4}));
}

// ---- losslessness (sampling and tree rules) ---------------------------------

TEST(VerifierLosslessTest, ChainOfOneEmitsTheTargetDistribution) {
  EXPECT_GT(generated_p_value("chain (1)", sampled({1}), verify, 1), kMinPValue);
}

TEST(VerifierLosslessTest, ChainOfTwoEmitsTheTargetJointDistribution) {
  EXPECT_GT(generated_p_value("chain (1,1)", sampled({1, 1}), verify, 2), kMinPValue);
}

TEST(VerifierLosslessTest, ThreeIidCandidatesEmitTheTargetDistribution) {
  EXPECT_GT(generated_p_value("tree (3)", sampled({3}), verify, 1), kMinPValue);
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

TEST(VerifierLosslessTest, DeterministicCandidatesEmitTheTargetJointDistribution) {
  EXPECT_GT(generated_p_value("deterministic", kLookupTree, verify, 2), kMinPValue);
}

TEST(VerifierLosslessTest, TwoByTwoTreeEmitsTheTargetJointDistribution) {
  EXPECT_GT(generated_p_value("tree (2,2)", sampled({2, 2}), verify, 2), kMinPValue);
}

// Drafts from a truncated q' (a draft model's top-k or top-p cut): exact
// for the target whatever q' is, as long as the verifier tests against it.
TEST(VerifierLosslessTest, TopKTruncatedDraftsEmitTheTargetJointDistribution) {
  const Cut top2{2, 1.0f};
  EXPECT_GT(generated_p_value("top-2 chain (1,1)", sampled({1, 1}, top2), verify, 2), kMinPValue);
  EXPECT_GT(generated_p_value("top-2 tree (3)", sampled({3}, top2), verify, 1), kMinPValue);
  EXPECT_GT(generated_p_value("top-2 tree (2,2)", sampled({2, 2}, top2), verify, 2), kMinPValue);
}

TEST(VerifierLosslessTest, TopPTruncatedDraftsEmitTheTargetJointDistribution) {
  const Cut nucleus{0, 0.6f};
  EXPECT_GT(generated_p_value("top-p 0.6 chain (1,1)", sampled({1, 1}, nucleus), verify, 2), kMinPValue);
  EXPECT_GT(generated_p_value("top-p 0.6 tree (2,2)", sampled({2, 2}, nucleus), verify, 2), kMinPValue);
}

// A test of the test: the same check rejects a verifier with a wrong residual.
TEST(VerifierLosslessTest, ChiSquareCatchesAVerifierThatResamplesFromP) {
  EXPECT_LT(generated_p_value("wrong residual, chain (1)", sampled({1}), verify_resampling_from_p, 1),
            kMinPValue);
  EXPECT_LT(generated_p_value("wrong residual, tree (3)", sampled({3}), verify_resampling_from_p, 1),
            kMinPValue);
}

// min(1, p / q) = 1 when q == p: the draft is never rejected.
TEST(VerifierAcceptanceTest, DraftEqualToTargetIsAlwaysFullyAccepted) {
  constexpr int kChain = 4;
  constexpr uint64_t kRequests = 20000;
  int64_t short_verdicts = 0;
  for (uint64_t request = 0; request < kRequests; ++request) {
    const DraftTree draft = sample_tree(kTarget, {1, 1, 1, 1}, kPrompt, 0, request);
    short_verdicts += verify_against(kTarget, draft, kPrompt, {}, kSeed, request, 0).accepted.size() != kChain;
  }
  EXPECT_EQ(short_verdicts, 0);
}

// In exact arithmetic the residual never runs out of mass (verifier.cpp);
// with float rows it can, when q sums to a little more than p. Magnified
// here (q = p / 0.9): a rejection leaves max(0, p - q) = 0 and the bonus must
// come from p rather than fail.
TEST(VerifierAcceptanceTest, ResidualWithoutMassFallsBackToTheTarget) {
  constexpr uint64_t kRequests = 2000;
  int rejections = 0;
  for (uint64_t request = 0; request < kRequests; ++request) {
    DraftTree draft = sample_tree(kDraft, {1}, kPrompt, 0, request);
    for (float& q : draft.q[0].probs) q /= 0.9f;
    const std::vector<float> logits = context_logits(kDraft, draft, kPrompt);  // p = the draft's own rows
    TargetRows target(logits.data(), 2, kVocab, SamplingParams{});
    Verdict verdict;
    ASSERT_NO_THROW(verdict = verify(VerifyRequest{&draft, &target, 0, request, 0})) << "request " << request;
    if (!verdict.accepted.empty()) continue;
    ++rejections;
    EXPECT_GT(kDraft[kPrompt][verdict.bonus], 0.0f) << "request " << request;
  }
  EXPECT_GT(rejections, 0);
}

// ---- determinism ------------------------------------------------------------

// The verdict for one request of a (2,2) tree at position `base`.
Verdict verdict_of(uint64_t seed, uint64_t request, uint32_t base) {
  const DraftTree draft = sample_tree(kDraft, {2, 2}, kPrompt, base, request);
  return verify_against(kTarget, draft, kPrompt, {}, seed, request, base);
}

void expect_same(const Verdict& a, const Verdict& b, uint64_t request) {
  EXPECT_EQ(a.accepted, b.accepted) << "request " << request;
  EXPECT_EQ(a.bonus, b.bonus) << "request " << request;
  EXPECT_EQ(a.tokens, b.tokens) << "request " << request;
}

TEST(VerifierDeterminismTest, SameKeyGivesTheSameVerdictWhateverRanBefore) {
  constexpr uint64_t kRequests = 200;
  std::vector<Verdict> forward;
  for (uint64_t request = 0; request < kRequests; ++request) forward.push_back(verdict_of(kSeed, request, 7));
  // Reverse order, each call interleaved with an unrelated one.
  for (uint64_t request = kRequests; request-- > 0;) {
    verdict_of(kSeed + 1, request + kRequests, 3);
    expect_same(verdict_of(kSeed, request, 7), forward[request], request);
  }
  // Another thread: no hidden state.
  std::vector<Verdict> threaded(kRequests);
  std::thread worker([&threaded] {
    for (uint64_t request = 0; request < kRequests; ++request) {
      threaded[request] = verdict_of(kSeed, request, 7);
    }
  });
  worker.join();
  for (uint64_t request = 0; request < kRequests; ++request) {
    expect_same(threaded[request], forward[request], request);
  }
}

TEST(VerifierDeterminismTest, SeedRequestAndPositionEachChangeTheDecisions) {
  constexpr uint64_t kRequests = 200;
  int differ_by_seed = 0;
  int differ_by_position = 0;
  int differ_by_request = 0;
  for (uint64_t request = 0; request < kRequests; ++request) {
    const Verdict verdict = verdict_of(kSeed, request, 7);
    differ_by_seed += verdict_of(kSeed + 1, request, 7).tokens != verdict.tokens;
    differ_by_position += verdict_of(kSeed, request, 8).tokens != verdict.tokens;
    differ_by_request += verdict_of(kSeed, request + kRequests, 7).tokens != verdict.tokens;
  }
  EXPECT_GT(differ_by_seed, 0);
  EXPECT_GT(differ_by_position, 0);
  EXPECT_GT(differ_by_request, 0);
}

// ---- matching (sampled requests, deterministic drafts) ----------------------

// A deterministic tree of `table`'s most likely tokens: every node of level
// d has the k_config[d] tokens of largest probability at its context.
DraftTree top_tree(Table table, const std::vector<int>& k_config, int32_t state) {
  DraftTree draft;
  draft.deterministic = true;
  std::vector<std::pair<int32_t, int32_t>> level = {{-1, state}};  // (node, the state after it)
  for (const int k : k_config) {
    std::vector<std::pair<int32_t, int32_t>> next;
    for (const auto& [parent, at] : level) {
      std::vector<int32_t> order(kVocab);
      for (int32_t v = 0; v < kVocab; ++v) order[static_cast<size_t>(v)] = v;
      std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return table[at][a] > table[at][b]; });
      for (int j = 0; j < k; ++j) {
        next.push_back({static_cast<int32_t>(draft.tokens.size()), order[static_cast<size_t>(j)]});
        draft.tokens.push_back(order[static_cast<size_t>(j)]);
        draft.parents.push_back(parent);
      }
    }
    level = std::move(next);
  }
  return draft;
}

DraftFn top_tokens(const std::vector<int>& k_config) {
  return [k_config](int32_t state, uint32_t, uint64_t) { return top_tree(kDraft, k_config, state); };
}

// Sampling alone: the target's token after an empty draft, one at a time.
const DraftFn kNoDraft = [](int32_t, uint32_t, uint64_t) { return DraftTree{}; };

TEST(VerifierMatchingTest, SampledTokensAreSamplingsOwnWhateverTheDraft) {
  constexpr uint64_t kRequests = 2000;
  constexpr size_t kTokens = 6;
  const std::vector<std::pair<std::string, DraftFn>> drafts = {
      {"top chain (1,1,1)", top_tokens({1, 1, 1})}, {"top tree (2,2)", top_tokens({2, 2})},
      {"top tree (3,1)", top_tokens({3, 1})}, {"lookup tree", kLookupTree}};
  std::vector<int64_t> differing(drafts.size(), 0);
  int64_t short_verdicts = 0;
  for (uint64_t request = 0; request < kRequests; ++request) {
    const std::vector<int32_t> sampled = generate(kNoDraft, verify, request, kTokens);
    for (size_t d = 0; d < drafts.size(); ++d) {
      differing[d] += generate(drafts[d].second, verify, request, kTokens) != sampled;
    }
    // A draft of sampling's own next three tokens is accepted whole.
    DraftTree own;
    own.deterministic = true;
    own.tokens.assign(sampled.begin() + 1, sampled.begin() + 4);
    own.parents = {-1, 0, 1};
    const Verdict verdict = verify_against(kTarget, own, sampled[0], {}, kSeed, request, 1);
    short_verdicts += verdict.accepted.size() != 3 || verdict.bonus != sampled[4];
  }
  for (size_t d = 0; d < drafts.size(); ++d) EXPECT_EQ(differing[d], 0) << drafts[d].first;
  EXPECT_EQ(short_verdicts, 0);
}

TEST(VerifierMatchingTest, TopTokenDraftsEmitTheTargetJointDistribution) {
  EXPECT_GT(generated_p_value("top-token chain (1,1)", top_tokens({1, 1}), verify, 2), kMinPValue);
  EXPECT_GT(generated_p_value("top-token tree (2,2)", top_tokens({2, 2}), verify, 2), kMinPValue);
}

// A target whose rows lie on a device draws every context's token in one
// batch before the walk (target_draws, TargetRows::set_sample).
TEST(VerifierMatchingTest, DrawsMadeBeforehandGiveTheVerdictOfDrawsMadeOnTheWay) {
  const DraftTree draft = top_tree(kDraft, {2, 2}, kPrompt);
  const std::vector<float> logits = context_logits(kTarget, draft, kPrompt);
  const int64_t contexts = static_cast<int64_t>(draft.tokens.size()) + 1;
  int64_t deep = 0;
  for (uint64_t request = 0; request < 500; ++request) {
    TargetRows on_the_way(logits.data(), contexts, kVocab, SamplingParams{});
    TargetRows beforehand(logits.data(), contexts, kVocab, SamplingParams{});
    TargetRows elsewhere(logits.data(), contexts, kVocab, SamplingParams{});
    const VerifyRequest ahead{&draft, &beforehand, kSeed, request, 7};
    ASSERT_TRUE(matches_target_draws(ahead));
    const std::vector<FinalDraw> draws = target_draws(ahead);
    ASSERT_EQ(draws.size(), static_cast<size_t>(contexts));
    for (const FinalDraw& draw : draws) beforehand.set_sample(draw.context, elsewhere.draw(draw));
    const Verdict verdict = verify(ahead);
    expect_same(verdict, verify(VerifyRequest{&draft, &on_the_way, kSeed, request, 7}), request);
    deep += verdict.accepted.size() == 2;
  }
  EXPECT_GT(deep, 0) << "some verdicts reach the second level";
}

TEST(VerifierMatchingTest, GreedyRequestsAndDraftsFromQTakeTheirOwnRules) {
  const DraftTree top = top_tree(kDraft, {1}, kPrompt);
  const DraftTree drawn = sample_tree(kDraft, {1}, kPrompt, 0, 0);
  const std::vector<float> logits = context_logits(kTarget, top, kPrompt);
  TargetRows greedy(logits.data(), 2, kVocab, SamplingParams{0.0f});
  TargetRows sampled(logits.data(), 2, kVocab, SamplingParams{});
  EXPECT_FALSE(matches_target_draws(VerifyRequest{&top, &greedy, kSeed, 0, 0}));
  EXPECT_FALSE(matches_target_draws(VerifyRequest{&drawn, &sampled, kSeed, 0, 0}));
  EXPECT_TRUE(matches_target_draws(VerifyRequest{&top, &sampled, kSeed, 0, 0}));
  const DraftTree none;
  EXPECT_TRUE(matches_target_draws(VerifyRequest{&none, &sampled, kSeed, 0, 0}));
}

// ---- malformed drafts -------------------------------------------------------

class VerifierInvalidDraftTest : public ::testing::Test {
 protected:
  // A valid sampled chain of 2; each test breaks one thing.
  VerifierInvalidDraftTest() : draft_(sample_tree(kDraft, {1, 1}, kPrompt, 0, 0)) {
    logits_ = context_logits(kTarget, draft_, kPrompt);
  }
  ::testing::AssertionResult rejected(const std::vector<std::string>& needles) {
    return throws_error(
        [&] {
          TargetRows target(logits_.data(), contexts_, vocab_, SamplingParams{});
          verify(VerifyRequest{&draft_, &target});
        },
        ErrorKind::kInvalidArgument, needles);
  }

  DraftTree draft_;
  std::vector<float> logits_;
  int64_t contexts_ = 3;
  int64_t vocab_ = kVocab;
};

TEST_F(VerifierInvalidDraftTest, TheUnbrokenDraftIsAccepted) {
  TargetRows target(logits_.data(), 3, kVocab, SamplingParams{});
  EXPECT_NO_THROW(verify(VerifyRequest{&draft_, &target}));
}

TEST_F(VerifierInvalidDraftTest, NullDraftOrTargetIsRejected) {
  VerifyRequest request;
  EXPECT_TRUE(throws_error([&] { verify(request); }, ErrorKind::kInvalidArgument, {"draft is null"}));
  request.draft = &draft_;
  EXPECT_TRUE(throws_error([&] { verify(request); }, ErrorKind::kInvalidArgument, {"target is null"}));
}

TEST_F(VerifierInvalidDraftTest, NonPositiveVocabIsRejected) {
  vocab_ = 0;
  EXPECT_TRUE(rejected({"vocab"}));
}

TEST_F(VerifierInvalidDraftTest, TargetRowsThatAreNotOnePerContextAreRejected) {
  contexts_ = 2;
  EXPECT_TRUE(rejected({"target has 2 rows", "n + 1"}));
}

TEST_F(VerifierInvalidDraftTest, TokensAndParentsOfDifferentLengthsAreRejected) {
  draft_.parents.push_back(1);
  EXPECT_TRUE(rejected({"2 tokens but 3 parents"}));
}

TEST_F(VerifierInvalidDraftTest, ParentsOutOfTopologicalOrderAreRejected) {
  draft_.parents[1] = 1;
  EXPECT_TRUE(rejected({"node 1 has parent 1", "topological"}));
  draft_.parents[1] = -2;
  EXPECT_TRUE(rejected({"node 1 has parent -2"}));
}

TEST_F(VerifierInvalidDraftTest, TokensOutsideTheVocabAreRejected) {
  draft_.tokens[1] = kVocab;
  EXPECT_TRUE(rejected({"node 1 proposes token 6", "vocab"}));
  draft_.tokens[1] = -1;
  EXPECT_TRUE(rejected({"node 1 proposes token -1"}));
}

TEST_F(VerifierInvalidDraftTest, DraftDistributionsOfTheWrongSizeAreRejected) {
  draft_.q.resize(2);
  EXPECT_TRUE(rejected({"q has 2 rows", "n + 1 = 3"}));
  draft_.q.clear();
  EXPECT_TRUE(rejected({"q has 0 rows"}));
}

TEST_F(VerifierInvalidDraftTest, MalformedDraftRowsAreRejected) {
  draft_.q[2].ids.push_back(0);
  EXPECT_TRUE(rejected({"q row 2 has", "ids but"}));
  draft_.q[2].probs.push_back(0.5f);
  draft_.q[2].ids.back() = kVocab;
  EXPECT_TRUE(rejected({"q row 2 names token 6", "vocab"}));
}

TEST_F(VerifierInvalidDraftTest, DraftDistributionsOnADeterministicDraftAreRejected) {
  draft_.deterministic = true;
  EXPECT_TRUE(rejected({"deterministic", "q has 3 rows"}));
}

TEST_F(VerifierInvalidDraftTest, TokenTheDraftCouldNotHaveSampledIsRejected) {
  const int32_t other = (draft_.tokens[1] + 1) % kVocab;
  draft_.q[1] = {{other}, {1.0f}};  // context 1's row without node 1's token
  EXPECT_TRUE(rejected({"node 1 proposes token", "context 1 gives it 0"}));
}

}  // namespace
}  // namespace seed::spec
