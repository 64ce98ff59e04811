// Losslessness of the verifier's sampling and tree rules, by chi-square of
// the generated tokens against the toy target (and a test of that test: a
// verifier with a wrong residual is caught); a draft equal to the target is
// always accepted, and a residual without mass falls back to the target.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "models/base/counter_rng.h"
#include "models/base/sampling.h"
#include "spec/api/verifier.h"
#include "tests/spec/verifier_toy_decoding.h"

namespace seed::spec {
namespace {

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

TEST(VerifierLosslessTest, ChainOfOneEmitsTheTargetDistribution) {
  EXPECT_GT(generated_p_value("chain (1)", sampled({1}), verify, 1), kMinPValue);
}

TEST(VerifierLosslessTest, ChainOfTwoEmitsTheTargetJointDistribution) {
  EXPECT_GT(generated_p_value("chain (1,1)", sampled({1, 1}), verify, 2), kMinPValue);
}

TEST(VerifierLosslessTest, ThreeIidCandidatesEmitTheTargetDistribution) {
  EXPECT_GT(generated_p_value("tree (3)", sampled({3}), verify, 1), kMinPValue);
}

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

}  // namespace
}  // namespace seed::spec
