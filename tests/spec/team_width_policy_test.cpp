// TeamWidthPolicy on scripted forward times: the whole team while it is
// the faster, one thread while other processes stall it, probes that back
// off while the machine stays busy, and the team again once it is free.
#include "spec/engine/team_width_policy.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <vector>

namespace seed::spec {
namespace {

constexpr double kMs = 1e-3;

// A forward of `rows` rows: on the whole team 0.4 ms + 0.1 ms a row, twice
// that right after a forward on one thread (its threads asleep); on one
// thread 1.6 times that; with the cores taken by other processes the
// team's forwards take 30 times as long, one thread's 1.5 times.
double forward_s(int rows, bool single, bool after_single, bool busy) {
  const double team = (0.4 + 0.1 * rows) * kMs;
  if (single) return team * 1.6 * (busy ? 1.5 : 1.0);
  return team * (after_single ? 2.0 : 1.0) * (busy ? 30.0 : 1.0);
}

// Runs `forwards` forwards of 1 to 8 rows in turn; returns the width each
// ran at (true: one thread).
std::vector<bool> run(TeamWidthPolicy& policy, int forwards, bool busy) {
  std::vector<bool> widths;
  bool after_single = false;
  for (int i = 0; i < forwards; ++i) {
    const bool single = policy.single();
    const int rows = 1 + i % 8;
    widths.push_back(single);
    policy.add(rows, forward_s(rows, single, after_single, busy), !single);
    after_single = single;
  }
  return widths;
}

int count_single(const std::vector<bool>& widths, size_t from = 0) {
  int n = 0;
  for (size_t i = from; i < widths.size(); ++i) n += widths[i] ? 1 : 0;
  return n;
}

TEST(TeamWidthPolicyTest, AFreeMachineRunsTheWholeTeamProbingOneThreadRarely) {
  TeamWidthPolicy policy;
  const std::vector<bool> widths = run(policy, 4 * TeamWidthPolicy::kProbeEvery, false);
  EXPECT_FALSE(policy.single());
  EXPECT_FALSE(widths.front());
  EXPECT_LE(count_single(widths), 4);  // one probe every kProbeEvery
  EXPECT_GE(count_single(widths), 3);
}

TEST(TeamWidthPolicyTest, ProbesOnAFreeMachineFallOnNarrowForwards) {
  // Rounds of a speculative engine: three drafted forwards of 48 rows,
  // then seven of 6 without drafts. A probe costs about its forward, so
  // each waits for a narrow one.
  TeamWidthPolicy policy;
  int probes = 0;
  bool after_single = false;
  for (int i = 0; i < 4 * TeamWidthPolicy::kProbeEvery; ++i) {
    const int rows = i % 10 < 3 ? 48 : 6;
    const bool single = policy.single();
    if (single) {
      ++probes;
      EXPECT_EQ(rows, 6) << "forward " << i;
    }
    policy.add(rows, forward_s(rows, single, after_single, false), !single);
    after_single = single;
  }
  EXPECT_GE(probes, 3);
  EXPECT_FALSE(policy.single());
}

TEST(TeamWidthPolicyTest, ARunStartedOnABusyMachineTriesOneThreadEarly) {
  // Every forward of the team is slow from the first: none stands out
  // from the line, and the first probe finds one thread faster.
  TeamWidthPolicy policy;
  const std::vector<bool> widths = run(policy, 40, true);
  const size_t probe = static_cast<size_t>(std::find(widths.begin(), widths.end(), true) - widths.begin());
  EXPECT_GE(probe, static_cast<size_t>(TeamWidthPolicy::kFirstProbe));
  EXPECT_LT(probe, static_cast<size_t>(TeamWidthPolicy::kFirstProbe) + 8);  // the next narrow forward's
  EXPECT_TRUE(policy.single());
}

TEST(TeamWidthPolicyTest, ATeamStalledByOtherProcessesMovesToOneThreadAtOnce) {
  TeamWidthPolicy policy;
  run(policy, 100, false);
  const std::vector<bool> widths = run(policy, 40, true);
  // Two stalled forwards are followed by a probe on one thread, which
  // wins: from then on one thread, but for a probe of the team (two
  // forwards) 16 forwards later.
  EXPECT_FALSE(widths[0]);
  EXPECT_FALSE(widths[1]);
  EXPECT_TRUE(widths[2]);
  EXPECT_TRUE(policy.single());
  EXPECT_EQ(count_single(widths, 2), 36);
}

TEST(TeamWidthPolicyTest, OneStalledForwardIsAHiccupNotABusyMachine) {
  TeamWidthPolicy policy;
  run(policy, 100, false);
  policy.add(4, 10 * forward_s(4, false, false, false), true);
  const std::vector<bool> widths = run(policy, 100, false);
  EXPECT_EQ(count_single(widths), 0);
}

TEST(TeamWidthPolicyTest, ProbesOfTheTeamBackOffWhileTheMachineStaysBusy) {
  TeamWidthPolicy policy;
  run(policy, 100, false);
  const std::vector<bool> widths = run(policy, 4000, true);
  std::vector<size_t> probes;  // where runs of forwards on the team start, after the switch
  for (size_t i = 3; i < widths.size(); ++i) {
    if (widths[i]) continue;
    if (widths[i - 1]) probes.push_back(i);
    EXPECT_TRUE(widths[i - 1] || widths[i - 2]) << "forward " << i;  // two forwards a probe
  }
  ASSERT_GE(probes.size(), 4u);
  EXPECT_LE(probes.size(), 10u);  // 16, 32, ..., 1024 apart
  EXPECT_EQ(probes[0], 3 + static_cast<size_t>(TeamWidthPolicy::kFirstProbe));  // the switch was forward 2
  for (size_t p = 2; p < probes.size(); ++p) {
    EXPECT_GE(probes[p] - probes[p - 1], probes[p - 1] - probes[p - 2]) << "probe " << p;
  }
  EXPECT_TRUE(policy.single());
}

TEST(TeamWidthPolicyTest, TheTeamComesBackOnceTheMachineIsFree) {
  TeamWidthPolicy policy;
  run(policy, 100, false);
  run(policy, 200, true);
  ASSERT_TRUE(policy.single());
  const std::vector<bool> widths = run(policy, 2 * TeamWidthPolicy::kLastProbe, false);
  EXPECT_FALSE(policy.single());
  // Back within one probe interval; then the team but for rare probes.
  const size_t back = static_cast<size_t>(std::find(widths.begin(), widths.end(), false) - widths.begin());
  EXPECT_LE(back, static_cast<size_t>(TeamWidthPolicy::kLastProbe));
  EXPECT_LE(count_single(widths, back + 1), 8);
}

TEST(TeamWidthPolicyTest, SlowForwardsOfOneThreadAreNoStalledTeam) {
  // A SEED engine's target on one thread of its own, its forwards on the
  // drafters' cores too only while they are idle: only those can stall.
  TeamWidthPolicy policy;
  for (int i = 0; i < 100; ++i) policy.add(2, 1 * kMs, i % 4 == 0);
  for (int i = 0; i < 40; ++i) policy.add(2, 10 * kMs, false);
  EXPECT_FALSE(policy.single());
  for (int i = 0; i < 2; ++i) policy.add(2, 100 * kMs, true);
  EXPECT_TRUE(policy.single());  // the probe
}

TEST(TeamWidthPolicyTest, OneSlowForwardOfOneThreadDoesNotBringTheTeamBack) {
  // One thread stays until a probe of the team beats its line, whatever
  // one-thread forwards do.
  TeamWidthPolicy policy;
  run(policy, 100, false);
  run(policy, 40, true);
  ASSERT_TRUE(policy.single());
  policy.add(4, 10 * forward_s(4, true, false, true), false);
  EXPECT_TRUE(policy.single());
}

TEST(TeamWidthPolicyTest, ATeamSlowerThanOneThreadGivesWayToIt) {
  // A model too small for its team (the barriers cost more than the
  // second core gives): the periodic probe finds one thread faster.
  TeamWidthPolicy policy;
  for (int i = 0; i < 2 * TeamWidthPolicy::kProbeEvery && !policy.single(); ++i) {
    policy.add(1, policy.single() ? 0.5 * kMs : 1.0 * kMs, !policy.single());
  }
  for (int i = 0; i < 10; ++i) policy.add(1, policy.single() ? 0.5 * kMs : 1.0 * kMs, !policy.single());
  EXPECT_TRUE(policy.single());
}

}  // namespace
}  // namespace seed::spec
