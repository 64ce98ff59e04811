// The verifier's matching rule (sampled requests, deterministic drafts): the
// tokens are sampling's own whatever the draft, top-token drafts follow the
// target's distribution, draws made beforehand give the verdicts of draws
// made on the way, and which requests and drafts the rule applies to.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "spec/api/verifier.h"
#include "tests/spec/verifier_toy_decoding.h"

namespace seed::spec {
namespace {

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

}  // namespace
}  // namespace seed::spec
