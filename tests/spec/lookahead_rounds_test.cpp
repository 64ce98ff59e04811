// LookaheadEngine's synchronous rounds on scripted engines: which steps a
// round commits for given drafts, EOS and max_new_tokens inside a step, a
// delimiter inside a multi-character token.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/spec/lookahead_scenario.h"

namespace seed::spec {
namespace {

TEST(LookaheadEngine, AllDraftsAcceptedCommitGammaStepsAndTheTargetsBonusStep) {
  const std::vector<std::string> steps = {"a1\n", "b2\n", "c3\n", "d4\n", "e5\n", "f6\n"};
  const Outcome o = run(steps, steps, 2);
  EXPECT_EQ(o.completion.text, "a1\nb2\nc3\nd4\ne5\nf6\n");
  EXPECT_EQ(o.completion.finish, FinishReason::kEos);
  // Rounds 1 and 2 commit three steps each (two drafted, one bonus); round 3
  // finds the draft at EOS (never accepted) and commits the target's EOS.
  EXPECT_EQ(o.steps.rounds, 3);
  EXPECT_EQ(o.target_calls, 3);
  EXPECT_EQ(o.steps.accepted_steps, 4);
  EXPECT_EQ(o.steps.drafted_steps, 5);
  EXPECT_EQ(o.steps.committed_steps, 7);
}

TEST(LookaheadEngine, AMismatchCommitsTheTargetsStepThereAndDropsTheRest) {
  const Outcome o = run({"a1\n", "b2\n", "c3\n"}, {"a1\n", "XX\n", "c3\n"}, 3);
  // Round 1: a1 accepted, XX rejected for b2; c3 (drafted after XX) is not
  // compared. Round 2: c3 accepted, then the target's EOS. Round 3: none
  // left: the draft is at EOS, the target's EOS ends it.
  EXPECT_EQ(o.completion.text, "a1\nb2\nc3\n");
  EXPECT_EQ(o.completion.finish, FinishReason::kEos);
  EXPECT_EQ(o.steps.rounds, 2);
  EXPECT_EQ(o.steps.drafted_steps, 4);
  EXPECT_EQ(o.steps.accepted_steps, 2);
}

TEST(LookaheadEngine, GammaZeroIsTheTargetAloneStepByStep) {
  const Outcome o = run({"a1\n", "b2\n"}, {"zz\n"}, 0);
  EXPECT_EQ(o.completion.text, "a1\nb2\n");
  EXPECT_EQ(o.draft_calls, 0);
  EXPECT_EQ(o.steps.rounds, 3);  // a1, b2, EOS
  EXPECT_EQ(o.steps.drafted_steps, 0);
}

TEST(LookaheadEngine, ADraftedStepThatEndsAtEosIsNeverAccepted) {
  // The draft ends the answer early ("a1" then EOS); the target goes on.
  const Outcome o = run({"a1\n", "b2\n"}, {"a1"}, 2);
  EXPECT_EQ(o.completion.text, "a1\nb2\n");
  EXPECT_EQ(o.steps.accepted_steps, 0);
}

TEST(LookaheadEngine, MaxNewTokensEndsTheRequestMidStep) {
  const Outcome o = run({"a1\n", "b2\n", "c3\n"}, {"a1\n", "b2\n", "c3\n"}, 2, 4);
  // a1\n (3 tokens) is accepted; the drafted "b" was cut by the budget, so
  // the target's "b" is committed and the request ends at 4 tokens.
  EXPECT_EQ(o.completion.text, "a1\nb");
  EXPECT_EQ(o.completion.finish, FinishReason::kLength);
  EXPECT_EQ(o.completion.tokens.size(), 4u);
  EXPECT_EQ(o.steps.rounds, 1);
}

TEST(LookaheadEngine, ADelimiterInsideAMultiCharacterTokenEndsTheStepWithTheWholeToken) {
  // "ok!\nZ" is "o", "k" and the one token "!\nZ": the step ends after it,
  // "Z" and all, and the next step starts after the "Z".
  const Outcome o = run({"ok!\nZ", "b2\n"}, {"ok!\nZ", "b2\n"}, 1);
  EXPECT_EQ(o.completion.text, "ok!\nZb2\n");
  EXPECT_EQ(o.steps.accepted_steps, 1);
}

}  // namespace
}  // namespace seed::spec
