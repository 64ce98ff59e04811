// The thread plan: with no flags no more threads are busy than cores, the
// drafters take what the target leaves, and flags that oversubscribe warn
// with what the automatic plan would do.
#include "launch/thread_plan.h"

#include <gtest/gtest.h>

namespace seed::launch {
namespace {

struct Case {
  const char* what;
  ThreadRequest request;
  int target_threads, drafters;
  bool warns;
};

TEST(ThreadPlanTest, SplitsCoresBetweenTargetAndDrafters) {
  // cores, --threads, --drafters, drafts on threads, sequences in flight
  const Case cases[] = {
      {"ar on 2 cores", {2, 0, 0, false, 0}, 2, 0, false},
      {"ar on 16 cores", {16, 0, 0, false, 0}, 16, 0, false},
      {"ar ignores --drafters", {2, 0, 3, false, 0}, 2, 0, false},
      {"seed on 1 core", {1, 0, 0, true, 0}, 1, 1, false},
      {"seed on 2 cores", {2, 0, 0, true, 0}, 1, 1, false},
      {"seed on 4 cores", {4, 0, 0, true, 0}, 3, 1, false},
      {"seed on 8 cores", {8, 0, 0, true, 0}, 6, 2, false},
      {"seed on 16 cores", {16, 0, 0, true, 0}, 12, 4, false},
      {"seed on 16 cores, 2 sequences", {16, 0, 0, true, 2}, 14, 2, false},
      {"--threads 1 on 4 cores: drafters take the rest", {4, 1, 0, true, 0}, 1, 3, false},
      {"--threads 1 on 4 cores, 2 sequences", {4, 1, 0, true, 2}, 1, 2, false},
      {"--drafters 3 on 8 cores: the target takes the rest", {8, 0, 3, true, 0}, 5, 3, false},
      {"--drafters 3 on 2 cores", {2, 0, 3, true, 0}, 1, 3, true},
      {"--threads 2 on 2 cores", {2, 2, 0, true, 0}, 2, 1, true},
      {"--threads 1 --drafters 1 on 2 cores", {2, 1, 1, true, 0}, 1, 1, false},
      {"--threads 4 for ar on 2 cores", {2, 4, 0, false, 0}, 4, 0, true},
  };
  for (const Case& c : cases) {
    const ThreadPlan plan = plan_threads(c.request);
    EXPECT_EQ(plan.target_threads, c.target_threads) << c.what;
    EXPECT_EQ(plan.drafters, c.drafters) << c.what;
    EXPECT_EQ(plan.draft_threads, 1) << c.what;
    EXPECT_EQ(!plan.oversubscribed.empty(), c.warns) << c.what << ": " << plan.oversubscribed;
    const bool flags = c.request.threads > 0 || c.request.drafters > 0;
    if (!flags && c.request.cores > 1) {
      EXPECT_LE(plan.busy_threads(), c.request.cores) << c.what;
    }
  }
}

TEST(ThreadPlanTest, WarningSaysWhatTheAutomaticPlanWouldChoose) {
  const ThreadPlan plan = plan_threads({2, 2, 3, true, 0});
  EXPECT_NE(plan.oversubscribed.find("5 busy threads on 2 cores"), std::string::npos) << plan.oversubscribed;
  EXPECT_NE(plan.oversubscribed.find("target 1 thread, 1 drafter x 1 thread"), std::string::npos)
      << plan.oversubscribed;
}

TEST(ThreadPlanTest, DescribesTheSplitInOneLine) {
  EXPECT_EQ(plan_threads({2, 0, 0, true, 0}).describe(), "2 cores: target 1 thread, 1 drafter x 1 thread");
  EXPECT_EQ(plan_threads({8, 0, 0, false, 0}).describe(), "8 cores: target 8 threads");
}

TEST(ThreadPlanTest, UsableCoresShareTheMachineAmongLocalRanks) {
  const int alone = usable_cores(1);
  EXPECT_GE(alone, 1);
  EXPECT_EQ(usable_cores(alone * 4), 1);  // more ranks than cores: one each
}

}  // namespace
}  // namespace seed::launch
