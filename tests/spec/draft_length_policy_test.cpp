// DraftLengthPolicy on scripted measurements: the draft length it chooses
// where drafts are dear or cheap, batches wide or narrow, acceptance high
// or low, and how it explores.
#include "spec/engine/draft_length_policy.h"

#include <gtest/gtest.h>

#include <functional>
#include <vector>

#include "tests/spec/draft_length_measurements.h"

namespace seed::spec {
namespace {

TEST(DraftLengthPolicyTest, DraftsTheLongestUntilMeasured) {
  DraftLengthPolicy policy(7, 1);
  EXPECT_EQ(policy.best(1), 7);
  EXPECT_EQ(policy.next(16, true), 7);
  EXPECT_EQ(policy.speedup(3, 1), 0);
}

TEST(DraftLengthPolicyTest, DraftsThatCostAForwardDraftNothing) {
  // A small draft on a GPU: a draft step costs a target step (launches).
  DraftLengthPolicy policy(4, 1);
  measure(policy, 4, 1, flat, /*draft_ms=*/1.0, /*accept=*/1.0);
  for (int k = 1; k <= 4; ++k) EXPECT_LT(policy.speedup(k, 1), 1) << "k = " << k;
  EXPECT_EQ(policy.best(1), 0);
}

TEST(DraftLengthPolicyTest, DraftsTimedInWiderBatchesCostALoneRequestAsMuchAsTheirBatch) {
  // Drafts timed at a third of a forward's time a token as their shares of
  // batches of three, and at no other width: a lone request's draft is not
  // taken as cheaper than that batch (on a GPU it is not; on a CPU a
  // little), so it drafts nothing where shares of batches of one would.
  DraftLengthPolicy batched(7, 1), alone(7, 1);
  measure(batched, 7, 1, flat, /*draft_ms=*/0.3, /*accept=*/0.8, false, 0, /*draft_batch=*/3);
  measure(alone, 7, 1, flat, /*draft_ms=*/0.3, /*accept=*/0.8, false, 0, /*draft_batch=*/1);
  EXPECT_GT(alone.best(1), 0);
  EXPECT_EQ(batched.best(1), 0);
  // Three requests drafted by one drafter cost the batch's time either way.
  EXPECT_DOUBLE_EQ(batched.speedup(4, 3), alone.speedup(4, 3));
}

// Drafts of 4 tokens timed as shares of batches of each width of
// `widths` in turn, a draft step of a batch of `width` taking
// `step_ms(width)`.
void time_drafts(DraftLengthPolicy& policy, const std::vector<int>& widths, const std::function<double(int)>& step_ms) {
  for (int i = 0; i < 8; ++i) {
    for (int width : widths) policy.add_draft(4, 4 * step_ms(width) / width * kMs, width);
  }
}

TEST(DraftLengthPolicyTest, DraftsTimedAtSeveralWidthsCostEachWidthWhatItsOwnBatchesCost) {
  // A draft step's time a line in the batch's width: on a CPU each row
  // costs, on a GPU a step costs its launches. Timed at widths 1 to 6, a
  // width is taken to cost what drafts timed at it alone cost.
  const std::vector<std::function<double(int)>> steps = {[](int width) { return 0.2 + 0.1 * width; },
                                                          [](int) { return 0.3; }};
  for (size_t s = 0; s < steps.size(); ++s) {
    DraftLengthPolicy mixed(7, 1);
    time_forwards(mixed, 7, 6, cpu_like);
    time_drafts(mixed, {1, 2, 3, 4, 5, 6}, steps[s]);
    give_verdicts(mixed, 0.9);
    for (int width : {1, 6}) {
      DraftLengthPolicy own(7, 1);
      time_forwards(own, 7, 6, cpu_like);
      time_drafts(own, {width}, steps[s]);
      give_verdicts(own, 0.9);
      for (int k = 1; k <= 7; ++k) {
        EXPECT_NEAR(mixed.speedup(k, width), own.speedup(k, width), 1e-9)
            << "step " << s << ", width " << width << ", k = " << k;
      }
      EXPECT_EQ(mixed.best(width), own.best(width)) << "step " << s << ", width " << width;
    }
  }
}

TEST(DraftLengthPolicyTest, AForwardWithoutATimeCountsButMovesNoLine) {
  // A forward that warmed up a CUDA graph costs many replays: it is no
  // measure of the others, and alone it measures nothing.
  DraftLengthPolicy timed(7, 1), untimed(7, 1), only(7, 1);
  measure(timed, 7, 4, cpu_like, /*draft_ms=*/0.05, /*accept=*/0.8);
  measure(untimed, 7, 4, cpu_like, /*draft_ms=*/0.05, /*accept=*/0.8);
  untimed.add_forward(4, 28, std::nullopt, false);
  for (int k = 0; k <= 7; ++k) EXPECT_DOUBLE_EQ(untimed.speedup(k, 4), timed.speedup(k, 4)) << "k = " << k;
  only.add_draft(3, 0.05 * kMs, 1);
  only.add_forward(1, 3, std::nullopt, false);
  EXPECT_EQ(only.speedup(3, 1), 0);
  EXPECT_EQ(only.best(1), 7);
}

TEST(DraftLengthPolicyTest, CheapDraftsOnFreeRowsDraftTheLongest) {
  DraftLengthPolicy policy(7, 1);
  measure(policy, 7, 1, flat, /*draft_ms=*/0.01, /*accept=*/0.9);
  EXPECT_EQ(policy.best(1), 7);
  EXPECT_GT(policy.speedup(7, 1), 3);
}

TEST(DraftLengthPolicyTest, RowsThatCostMakeAWideBatchDraftNothing) {
  DraftLengthPolicy policy(7, 1);
  measure(policy, 7, 16, cpu_like, /*draft_ms=*/0.1, /*accept=*/0.95);
  // One request: a forward of k + 1 rows still gains ~k tokens.
  EXPECT_GE(policy.best(1), 3);
  // Sixteen: each drafted token costs a fifth of a forward of 16 rows in
  // rows alone, plus its draft step on the one drafter.
  EXPECT_EQ(policy.best(16), 0);
  EXPECT_LT(policy.speedup(1, 16), 1);
}

TEST(DraftLengthPolicyTest, DraftersSideBySideShareTheDrafting) {
  // Draft steps of half a forward: one drafter for 4 requests cannot keep
  // up; four can.
  DraftLengthPolicy one(4, 1), four(4, 4);
  measure(one, 4, 4, flat, /*draft_ms=*/0.5, /*accept=*/1.0);
  measure(four, 4, 4, flat, /*draft_ms=*/0.5, /*accept=*/1.0);
  EXPECT_EQ(one.best(4), 0);
  EXPECT_GT(four.best(4), 0);
  EXPECT_GT(four.speedup(2, 4), one.speedup(2, 4));
}

TEST(DraftLengthPolicyTest, ACostPerDraftWhateverItsLengthFavoursLongDrafts) {
  // A draft rank: each draft waits half a forward for its round trip, and
  // each of its tokens adds a fiftieth.
  DraftLengthPolicy policy(7, 1);
  measure(policy, 7, 1, flat, /*draft_ms=*/0.02, /*accept=*/0.9, /*wider=*/false, /*latency_ms=*/0.5);
  EXPECT_EQ(policy.best(1), 7);
  EXPECT_GT(policy.speedup(7, 1), 2 * policy.speedup(1, 1));
}

TEST(DraftLengthPolicyTest, RejectedDraftsDraftNothing) {
  DraftLengthPolicy policy(7, 1);
  measure(policy, 7, 1, flat, /*draft_ms=*/0.05, /*accept=*/0.0);
  EXPECT_LT(policy.acceptance(), 0.1);
  EXPECT_EQ(policy.best(1), 0);
}

TEST(DraftLengthPolicyTest, ForwardsOnTheDraftersCoresMakeDraftingNothingFaster) {
  // Three requests on a CPU: drafting pays against forwards as fast as the
  // ones measured while drafting...
  DraftLengthPolicy policy(4, 1);
  measure(policy, 4, 3, cpu_like, /*draft_ms=*/0.05, /*accept=*/0.95);
  EXPECT_GT(policy.best(3), 0);
  // ...not once forwards without drafts, run on the drafters' cores too,
  // take half as long.
  for (int i = 0; i < 200; ++i) policy.add_forward(3, 0, 0.5 * cpu_like(3), /*wider=*/true);
  EXPECT_EQ(policy.best(3), 0);
}

TEST(DraftLengthPolicyTest, AWiderForwardCountsAsItsPriorUntilTimed) {
  // The drafter's core would double the target's threads: until a round
  // without drafts is timed, it is taken to run twice as fast...
  DraftLengthPolicy policy(4, 1, /*wider_prior=*/0.5);
  measure(policy, 4, 3, cpu_like, /*draft_ms=*/0.05, /*accept=*/0.95);
  EXPECT_EQ(policy.best(3), 0);
  // ...until such rounds turn out to run no faster than the others.
  for (int i = 0; i < 200; ++i) policy.add_forward(3, 0, cpu_like(3), /*wider=*/true);
  EXPECT_GT(policy.best(3), 0);
}

TEST(DraftLengthPolicyTest, DraftsVerifiedOnTheDraftersCoresTooCostWhatTheyWereTimedAt) {
  // The same three requests and prior, but the target drafted each round
  // itself, so the drafters were idle and every forward ran wider: drafting
  // pays as it does on one team.
  DraftLengthPolicy policy(4, 1, /*wider_prior=*/0.5);
  measure(policy, 4, 3, cpu_like, /*draft_ms=*/0.05, /*accept=*/0.95, /*wider=*/true);
  EXPECT_GT(policy.best(3), 0);
}

TEST(DraftLengthPolicyTest, RoundsWithoutDraftsCostWhatTheyWereTimedAt) {
  // Six requests, every forward on the drafters' cores too: drafting rounds
  // on a line of 1 ms plus 0.05 ms a row, rounds without drafts far under
  // that line's 1.3 ms at six rows (its intercept is no forward's cost).
  DraftLengthPolicy policy(7, 1, /*wider_prior=*/0.5);
  for (int i = 0; i < 100; ++i) {
    for (const int k : {3, 7}) {
      policy.add_forward(6, 6 * k, (1 + 0.05 * 6 * (k + 1)) * kMs, /*wider=*/true);
      policy.add_draft(k, 0.01 * k * kMs, 1);
    }
    if (i % 10 == 0) {  // two in a row: the first after drafting is not timed
      policy.add_forward(6, 0, 0.3 * kMs, /*wider=*/true);
      policy.add_forward(6, 0, 0.3 * kMs, /*wider=*/true);
    }
  }
  for (int i = 0; i < 200; ++i) policy.add_verdict(i % 10 == 0 ? 0 : 1, i % 10 == 0);
  EXPECT_EQ(policy.best(6), 0);
}

TEST(DraftLengthPolicyTest, ARoundWithoutDraftsRightAfterDraftingIsNoMeasureOfPlainBatching) {
  // Six requests, every forward wider. Drafting 3 tokens each: 2 ms a
  // forward and 0.18 ms of drafts for 6 x 3.44 tokens (9.5 tokens/ms).
  // Rounds without drafts take 0.9 ms right after drafting (6.7 tokens/ms:
  // drafting would pay) and 0.5 ms when steady (12 tokens/ms: it does not).
  DraftLengthPolicy policy(3, 1);
  for (int cycle = 0; cycle < 20; ++cycle) {
    for (int i = 0; i < 10; ++i) {
      policy.add_forward(6, 18, 2 * kMs, /*wider=*/true);
      policy.add_draft(3, 0.03 * kMs, 1);
    }
    policy.add_forward(6, 0, 0.9 * kMs, /*wider=*/true);
    policy.add_forward(6, 0, 0.5 * kMs, /*wider=*/true);
  }
  for (int i = 0; i < 200; ++i) policy.add_verdict(i % 10 == 0 ? 0 : 1, i % 10 == 0);
  EXPECT_EQ(policy.best(6), 0);
}

TEST(DraftLengthPolicyTest, TimesTwoRoundsWithoutDraftsOnceDraftingIsMeasured) {
  // Drafting pays on the measurements: the first drafted round is followed
  // by two without drafts (the second one timed), then drafting resumes.
  DraftLengthPolicy policy(7, 1);
  std::vector<int> lengths;
  for (int forward = 0; forward < 5; ++forward) {
    const int k = policy.next(1, true);
    lengths.push_back(k);
    policy.add_forward(1, k, flat(k + 1), false);
    if (k > 0) policy.add_draft(k, 0.01 * k * kMs, 1);
    for (int i = 0; i < k; ++i) policy.add_verdict(1, false);
  }
  EXPECT_EQ(lengths, (std::vector<int>{7, 0, 0, 7, 7}));
}

TEST(DraftLengthPolicyTest, FollowsDraftsThatBecomeDear) {
  DraftLengthPolicy policy(4, 1);
  measure(policy, 4, 1, flat, /*draft_ms=*/0.02, /*accept=*/0.9);
  EXPECT_EQ(policy.best(1), 4);
  // The machine gets busy with other work: drafts now cost a forward,
  // each counted as at most kOutlier times the line.
  for (int i = 0; i < 400; ++i) policy.add_draft(4, 4 * kMs, 1);
  EXPECT_EQ(policy.best(1), 0);
}

TEST(DraftLengthPolicyTest, DraftingNothingTimesASteadyDraftWhenItExploresAndResumes) {
  // One request at a time, whose drafts were timed dear (the machine busy
  // with other work): its drafter is caught up only where a request starts,
  // and a request's first draft also reads its prompt, so it is not timed.
  // Explorations time the draft after it; drafts cheap again resume drafting.
  DraftLengthPolicy policy(7, 1);
  measure(policy, 7, 1, flat, /*draft_ms=*/0.9, /*accept=*/0.8);
  ASSERT_EQ(policy.best(1), 0);
  int drafted_last = 0;
  for (int forward = 0; forward < 4 * DraftLengthPolicy::kExploreIdleEvery; ++forward) {
    const bool starting = forward % 100 == 0;
    const int k = policy.next(1, starting || drafted_last > 0);
    policy.add_forward(1, k, flat(k + 1), false);
    if (k > 0 && !starting) policy.add_draft(k, 0.01 * k * kMs, 1);
    for (int i = 0; i < k; ++i) policy.add_verdict(1, false);
    drafted_last = k;
  }
  EXPECT_GT(policy.best(1), 0);
}

TEST(DraftLengthPolicyTest, ExploresTheNeighboursOfTheBestAndNoneAWholeForwardAtATime) {
  DraftLengthPolicy policy(7, 1);
  measure(policy, 7, 1, flat, /*draft_ms=*/0.01, /*accept=*/0.9);
  ASSERT_EQ(policy.best(2), 7);
  // Forwards of two requests: both get the forward's length.
  std::vector<int> explored;  // lengths other than the best, in order
  std::vector<int> at;        // the forwards they came in
  for (int forward = 0; forward < 3 * DraftLengthPolicy::kExploreEvery; ++forward) {
    const int first = policy.next(2, true), second = policy.next(2, true);
    ASSERT_EQ(first, second) << "forward " << forward;
    if (first != 7) {
      explored.push_back(first);
      at.push_back(forward);
    }
    policy.add_forward(2, 2 * first, flat(2 * (first + 1)), false);
  }
  // None for two forwards, then half; one more than the longest is the
  // longest.
  EXPECT_EQ(explored, (std::vector<int>{0, 0, 3}));
  ASSERT_EQ(at.size(), 3u);
  EXPECT_EQ(at[1] - at[0], 1);
  EXPECT_EQ(at[2] - at[1], DraftLengthPolicy::kExploreEvery);
}

TEST(DraftLengthPolicyTest, DraftingNothingStillDraftsOneTokenTwoWholeForwardsNowAndThen) {
  // Drafts that would pay were they accepted, all rejected: acceptance
  // might recover.
  DraftLengthPolicy policy(4, 1);
  measure(policy, 4, 1, flat, /*draft_ms=*/0.5, /*accept=*/0.0);
  ASSERT_EQ(policy.best(2), 0);
  int drafting_forwards = 0;
  constexpr int kForwards = 4 * DraftLengthPolicy::kExploreIdleEvery;
  for (int i = 0; i < kForwards; ++i) {
    const int first = policy.next(2, true), second = policy.next(2, true);
    ASSERT_EQ(first, second) << "forward " << i;
    EXPECT_LE(first, 1);
    drafting_forwards += first;
    policy.add_forward(2, 2 * first, flat(2 * (1 + first)), false);
  }
  EXPECT_EQ(drafting_forwards, 2 * kForwards / DraftLengthPolicy::kExploreIdleEvery);
}

TEST(DraftLengthPolicyTest, DraftsThatWouldNotPayWereAllAcceptedExploreOnlyToTimeThemAgain) {
  // Drafts that cost a forward: acceptance is not worth measuring, each
  // exploration's drafts reading their requests' prompts.
  DraftLengthPolicy policy(4, 1);
  measure(policy, 4, 1, flat, /*draft_ms=*/1.0, /*accept=*/1.0);
  ASSERT_EQ(policy.best(2), 0);
  int drafting_forwards = 0;
  for (int i = 0; i < DraftLengthPolicy::kExploreHopelessEvery + DraftLengthPolicy::kExploreIdleEvery; ++i) {
    const int k = policy.next(2, true);
    drafting_forwards += k;
    policy.add_forward(2, 2 * k, flat(2 * (1 + k)), false);
  }
  EXPECT_EQ(drafting_forwards, 2);
}

TEST(DraftLengthPolicyTest, DraftingNothingExploresOnlyWhereTheDrafterIsCaughtUp) {
  // Requests whose drafters would first read a long context never explore;
  // once one is due, the next caught-up request (one starting) does.
  DraftLengthPolicy policy(4, 1);
  measure(policy, 4, 1, flat, /*draft_ms=*/0.5, /*accept=*/0.0);
  ASSERT_EQ(policy.best(2), 0);
  for (int i = 0; i < 2 * DraftLengthPolicy::kExploreIdleEvery; ++i) {
    ASSERT_EQ(policy.next(2, false), 0) << "forward " << i;
    policy.add_forward(2, 0, flat(2), false);
  }
  EXPECT_EQ(policy.next(2, false), 0);
  EXPECT_EQ(policy.next(2, true), 1);
  EXPECT_EQ(policy.next(2, true), 1);  // the rest of its forward
  policy.add_forward(2, 2, flat(4), false);
  EXPECT_EQ(policy.next(2, false), 0);
  EXPECT_EQ(policy.next(2, true), 1);  // the forward after it
  policy.add_forward(2, 1, flat(3), false);
  EXPECT_EQ(policy.next(2, true), 0);
}

// Three requests on a CPU-like target, drafting one token each: a few
// forwards timed, as early in a run (on the drafters' cores too, where they
// were idle), with 90% of the drafts accepted.
void measure_a_few_rounds(DraftLengthPolicy& policy, double drafted_ms) {
  for (int i = 0; i < 2; ++i) policy.add_forward(3, 0, 0.6 * kMs, true);
  for (int i = 0; i < 10; ++i) {
    policy.add_forward(3, 3, drafted_ms * kMs, true);
    for (int r = 0; r < 3; ++r) {
      policy.add_draft(1, 0.03 * kMs, 1);
      const bool accepted = (3 * i + r) % 10 != 9;
      policy.add_verdict(accepted ? 1 : 0, !accepted);
    }
  }
}

TEST(DraftLengthPolicyTest, AForwardFarSlowerThanItsLineCountsAsOnlySomewhatSlower) {
  // One forward timed three times its line (the machine busy for a
  // moment) would make drafting look dear enough to stop, and rounds
  // without drafts would never time drafting again.
  DraftLengthPolicy policy(4, 1);
  measure_a_few_rounds(policy, 0.9);
  ASSERT_GT(policy.best(3), 0);
  policy.add_forward(3, 3, 3 * 0.9 * kMs, true);
  EXPECT_GT(policy.best(3), 0);
}

TEST(DraftLengthPolicyTest, ADraftFarSlowerThanItsLineCountsAsOnlySomewhatSlower) {
  // A few drafts timed a hundred times their line (the drafter's thread
  // descheduled for a moment) would make drafting look dear enough to stop.
  DraftLengthPolicy policy(4, 1);
  measure_a_few_rounds(policy, 0.9);
  ASSERT_GT(policy.best(3), 0);
  for (int i = 0; i < 3; ++i) policy.add_draft(1, 100 * 0.03 * kMs, 1);
  EXPECT_GT(policy.best(3), 0);
}

TEST(DraftLengthPolicyTest, FollowsForwardsThatBecomeDear) {
  // Drafted forwards that keep taking three times as long are followed,
  // each counted as at most kOutlier times the line: drafting stops.
  DraftLengthPolicy policy(4, 1);
  measure_a_few_rounds(policy, 0.9);
  ASSERT_GT(policy.best(3), 0);
  for (int i = 0; i < 40; ++i) policy.add_forward(3, 3, 3 * 0.9 * kMs, true);
  EXPECT_EQ(policy.best(3), 0);
}

// Six requests on a CPU-like target where plain batching wins (every
// forward on the drafters' cores too): drafting one token each takes
// 1.55 ms a forward and 0.04 ms a draft for 6 x 1.9 tokens (6.4 tokens/ms),
// a forward without drafts 0.87 ms for 6 (6.9 tokens/ms).
void measure_plain_batching_winning(DraftLengthPolicy& policy) {
  for (int i = 0; i < 12; ++i) {
    policy.add_forward(6, 6, 1.55 * kMs, true);
    for (int r = 0; r < 6; ++r) {
      policy.add_draft(1, 0.04 * kMs, 1);
      const bool accepted = (6 * i + r) % 10 != 9;
      policy.add_verdict(accepted ? 1 : 0, !accepted);
    }
  }
  for (int i = 0; i < 10; ++i) policy.add_forward(6, 0, 0.87 * kMs, true);
}

TEST(DraftLengthPolicyTest, AForwardWithoutDraftsFarSlowerThanItsLineCountsAsOnlySomewhatSlower) {
  // One round without drafts timed ten times as long (the machine busy
  // for a moment) would make plain batching look dear enough to draft for
  // the rest of the run: only such rounds time plain batching again.
  DraftLengthPolicy policy(4, 1);
  measure_plain_batching_winning(policy);
  ASSERT_EQ(policy.best(6), 0);
  policy.add_forward(6, 0, 10 * 0.87 * kMs, true);
  EXPECT_EQ(policy.best(6), 0);
}

TEST(DraftLengthPolicyTest, FollowsForwardsWithoutDraftsThatBecomeDear) {
  DraftLengthPolicy policy(4, 1);
  measure_plain_batching_winning(policy);
  ASSERT_EQ(policy.best(6), 0);
  for (int i = 0; i < 40; ++i) policy.add_forward(6, 0, 2 * 0.87 * kMs, true);
  EXPECT_GT(policy.best(6), 0);
}

// Three requests on a CPU-like target (0.18 ms a forward and 0.14 ms a
// row), drafting one or two tokens each in turn (0.03 ms a token), where
// drafting pays from alpha 0.85 on: 1.11 ms a round of one token for
// 3 (1 + alpha) tokens, against 0.6 ms for 3 without drafts (timed two
// rounds at a time every 16). Rounds until `verdicts` one-token verdicts,
// 80% of them accepted.
void measure_acceptance_under_the_break_even(DraftLengthPolicy& policy, int verdicts) {
  for (int round = 0, v = 0; v < verdicts; ++round) {
    if (round % 16 == 0) {
      for (int i = 0; i < 2; ++i) policy.add_forward(3, 0, 0.6 * kMs, true);
    }
    const int k = 1 + round % 2;
    policy.add_forward(3, 3 * k, (0.18 + 0.14 * 3 * (k + 1)) * kMs, true);
    for (int r = 0; r < 3; ++r, ++v) {
      policy.add_draft(k, 0.03 * k * kMs, 1);
      const bool accepted = v % 5 != 4;
      policy.add_verdict(accepted ? 1 : 0, !accepted);
    }
  }
}

TEST(DraftLengthPolicyTest, AFewRejectionsEarlyDoNotStopDrafting) {
  // Twelve verdicts at 80% cannot tell 0.8 from 0.9: drafting goes on
  // until they can (once stopped, drafts would be tested again only every
  // kExploreIdleEvery forwards).
  DraftLengthPolicy policy(4, 1);
  measure_acceptance_under_the_break_even(policy, 12);
  EXPECT_LT(policy.acceptance(), 0.85);
  EXPECT_GT(policy.best(3), 0);
}

TEST(DraftLengthPolicyTest, RejectionsThatGoOnStopDrafting) {
  DraftLengthPolicy policy(4, 1);
  measure_acceptance_under_the_break_even(policy, 120);
  EXPECT_EQ(policy.best(3), 0);
}

}  // namespace
}  // namespace seed::spec
