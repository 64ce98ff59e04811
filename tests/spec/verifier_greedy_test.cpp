// The verifier's greedy rule on hand-made trees: the matching prefix of a
// chain, the matching sibling in a tree, the bonus token.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "spec/api/verifier.h"
#include "tests/spec/verifier_toy_pair.h"

namespace seed::spec {
namespace {

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

}  // namespace
}  // namespace seed::spec
