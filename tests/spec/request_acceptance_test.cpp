// A request's own acceptance beside the engine's (RequestAcceptance,
// DraftLengthPolicy::next): a request whose drafts are rejected stops
// drafting while the others go on, tries again after some rounds without
// drafts, and never drafts longer than the engine would.
#include "spec/engine/request_acceptance.h"

#include <gtest/gtest.h>

#include "spec/engine/draft_length_policy.h"
#include "tests/spec/draft_length_measurements.h"

namespace seed::spec {
namespace {

// Forwards of three requests on a CPU-like target, cheap drafts, an
// engine accepting 90% of its drafted tokens: drafting pays, and at the
// next forward no length is being explored.
constexpr double kWidth = 3;
DraftLengthPolicy drafting_policy() {
  DraftLengthPolicy policy(7, 1);
  measure(policy, 7, 3, cpu_like, 0.02, 0.9);
  return policy;
}

RequestAcceptance rejected_rounds(int rounds) {
  RequestAcceptance own;
  for (int i = 0; i < rounds; ++i) own.add_verdict(0, true);
  return own;
}

TEST(RequestAcceptanceTest, WithoutVerdictsARequestBetsOnTheEnginesAlpha) {
  const RequestAcceptance own;
  EXPECT_DOUBLE_EQ(own.alpha(0.83), 0.83);
  DraftLengthPolicy policy = drafting_policy();
  ASSERT_GT(policy.best(kWidth), 0);
  EXPECT_EQ(policy.next(kWidth, true, own), policy.best(kWidth));
}

TEST(RequestAcceptanceTest, ARequestWhoseDraftsAreRejectedDraftsNothingWhileTheEngineDrafts) {
  DraftLengthPolicy policy = drafting_policy();
  ASSERT_GT(policy.next(kWidth, true), 0);
  EXPECT_EQ(policy.next(kWidth, true, rejected_rounds(6)), 0);
  EXPECT_GT(policy.next(kWidth, true), 0);  // the others go on
}

TEST(RequestAcceptanceTest, OneRejectedTokenDoesNotStopARequestsDrafting) {
  DraftLengthPolicy policy = drafting_policy();
  EXPECT_GT(policy.next(kWidth, true, rejected_rounds(1)), 0);
}

TEST(RequestAcceptanceTest, ARequestAcceptingMoreThanTheEngineDraftsTheEnginesLength) {
  DraftLengthPolicy policy = drafting_policy();
  RequestAcceptance own;
  for (int i = 0; i < 5; ++i) own.add_verdict(7, false);
  EXPECT_GT(own.alpha(policy.acceptance()), policy.acceptance());
  EXPECT_EQ(policy.next(kWidth, true, own), policy.best(kWidth));
}

TEST(RequestAcceptanceTest, ARequestThatStoppedDraftingTriesAgainAfterRoundsWithoutDrafts) {
  DraftLengthPolicy policy = drafting_policy();
  RequestAcceptance own = rejected_rounds(6);
  int rounds = 0;
  while (policy.next(kWidth, true, own) == 0 && rounds < 100) {
    own.add_undrafted_round();
    ++rounds;
  }
  EXPECT_GT(rounds, 3);   // not at once: its rejections still count
  EXPECT_LT(rounds, 40);  // but they fade
}

}  // namespace
}  // namespace seed::spec
