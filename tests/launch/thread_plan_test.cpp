// The thread plan: with no flags no more threads are busy than cores, the
// drafters take what the target leaves, and flags that oversubscribe warn
// with what the automatic plan would do; OMP_NUM_THREADS sets the cores.
#include "launch/thread_plan.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>

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

// Sets or unsets OMP_NUM_THREADS for one scope, restoring what was there.
class OmpNumThreads {
 public:
  explicit OmpNumThreads(const char* value) {
    if (const char* old = std::getenv("OMP_NUM_THREADS")) old_ = old;
    value ? setenv("OMP_NUM_THREADS", value, 1) : unsetenv("OMP_NUM_THREADS");
  }
  ~OmpNumThreads() { old_ ? setenv("OMP_NUM_THREADS", old_->c_str(), 1) : unsetenv("OMP_NUM_THREADS"); }

 private:
  std::optional<std::string> old_;
};

TEST(ThreadPlanTest, UsableCoresShareTheMachineAmongLocalRanks) {
  const OmpNumThreads unset(nullptr);
  const int alone = usable_cores(1);
  EXPECT_GE(alone, 1);
  EXPECT_EQ(usable_cores(alone * 4), 1);  // more ranks than cores: one each
}

TEST(ThreadPlanTest, OmpNumThreadsSetsTheCoresWhateverTheMachineHas) {
  const OmpNumThreads three("3");
  EXPECT_EQ(usable_cores(1), 3);
  EXPECT_EQ(usable_cores(64), 3);  // the launcher gave each rank its count
}

TEST(ThreadPlanTest, OmpNumThreadsIsReadAsLibgompReadsIt) {
  EXPECT_EQ(omp_num_threads("4"), 4);
  EXPECT_EQ(omp_num_threads(" 12 "), 12);
  EXPECT_EQ(omp_num_threads("4,2"), 4);  // a nested list: the outer level
  EXPECT_EQ(omp_num_threads(nullptr), 0);
  EXPECT_EQ(omp_num_threads(""), 0);
  EXPECT_EQ(omp_num_threads("0"), 0);
  EXPECT_EQ(omp_num_threads("-2"), 0);
  EXPECT_EQ(omp_num_threads("four"), 0);
  EXPECT_EQ(omp_num_threads("4x"), 0);
  EXPECT_EQ(omp_num_threads("99999999999"), 0);
}

}  // namespace
}  // namespace seed::launch
