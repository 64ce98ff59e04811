// A SEED engine's forward takes its idle drafter threads' cores (WiderTeam)
// only where those drafters draft in this process: a proxy whose drafts
// are made elsewhere (a draft rank under mpirun) leaves no core idle here,
// and a forward widened onto it would run more threads than this
// process has cores. For the same reason the target computes new prompts
// ahead of their first drafts only while those are made elsewhere.
#include <gtest/gtest.h>
#include <omp.h>

#include <mutex>
#include <set>

#include "models/causal_lm.h"
#include "spec/drafters/model/draft_model_drafter.h"
#include "spec/engine/engine_factory.h"
#include "spec/engine/model_target.h"
#include "spec/engine/scheduled_engine.h"
#include "tests/spec/engine_fixtures.h"
#include "tests/spec/forwarding.h"

namespace seed::spec {
namespace {

// A target that notes the OpenMP team size each forward runs with, and
// counts the prefills ahead of a first verify.
class TeamNotingTarget final : public ::seed::testing::ForwardingTarget {
 public:
  using ForwardingTarget::ForwardingTarget;
  std::vector<Verdict> verify(const std::vector<VerifyItem>& items) override {
    note();
    return ForwardingTarget::verify(items);
  }
  void prefill(const std::vector<uint64_t>& slots) override {
    note();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      ++prefills_;
    }
    ForwardingTarget::prefill(slots);
  }

  std::set<int> teams() {
    std::lock_guard<std::mutex> lock(mutex_);
    return teams_;
  }
  int prefills() {
    std::lock_guard<std::mutex> lock(mutex_);
    return prefills_;
  }

 private:
  void note() {
    std::lock_guard<std::mutex> lock(mutex_);
    teams_.insert(omp_get_max_threads());
  }

  std::mutex mutex_;
  std::set<int> teams_;
  int prefills_ = 0;
};

// A drafter that says its drafts are made elsewhere, as a draft rank's
// proxy does.
class ElsewhereDrafter final : public ::seed::testing::ForwardingDrafter {
 public:
  using ForwardingDrafter::ForwardingDrafter;
  bool drafts_here() const override { return false; }
};

class ForwardCoresTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { pairs_ = new ::seed::testing::TestModelPairs("seed_forward_cores_test"); }
  static void TearDownTestSuite() { delete pairs_; }

  // seed-batch's tokens for `requests` with two drafters of `draft_threads`
  // threads each, drafting here or elsewhere; `teams`: the team sizes its
  // forwards ran with; `prefills`: the prefills ahead of a first verify.
  static std::vector<std::vector<int32_t>> generate(const std::vector<GenRequest>& requests, bool here,
                                                    int draft_threads, std::set<int>* teams, int* prefills) {
    auto target = std::make_unique<TeamNotingTarget>(
        std::make_unique<ModelTarget>(models::CausalLM::load(pairs_->pair.target)));
    TeamNotingTarget* noted = target.get();
    std::vector<std::unique_ptr<Drafter>> drafters;
    for (int i = 0; i < 2; ++i) {
      std::unique_ptr<Drafter> drafter = make_draft_model_drafter(models::CausalLM::load(pairs_->pair.draft));
      if (!here) drafter = std::make_unique<ElsewhereDrafter>(std::move(drafter));
      drafters.push_back(std::move(drafter));
    }
    RunSettings settings;
    settings.k_config = {1, 1, 1};
    auto engine = ScheduledEngine::seed("seed-batch", std::move(target), std::move(drafters), settings,
                                        Scheduler(SchedulePolicy::kBatch, 16), draft_threads);
    const std::vector<std::vector<int32_t>> tokens = ::seed::testing::tokens_of(engine->generate(requests));
    *teams = noted->teams();
    *prefills = noted->prefills();
    return tokens;
  }

  static ::seed::testing::TestModelPairs* pairs_;
};

::seed::testing::TestModelPairs* ForwardCoresTest::pairs_ = nullptr;

TEST_F(ForwardCoresTest, AForwardTakesIdleDraftersCoresOnlyWhereTheyDraftHere) {
  const std::vector<GenRequest> requests = ::seed::testing::varied_requests(4, 0.0f, 24);
  const int own = omp_get_max_threads();
  std::set<int> here_teams, elsewhere_teams;
  int here_prefills = 0, elsewhere_prefills = 0;
  const auto here = generate(requests, true, 2, &here_teams, &here_prefills);
  const auto elsewhere = generate(requests, false, 2, &elsewhere_teams, &elsewhere_prefills);
  EXPECT_EQ(here, elsewhere);
  // Here: the forwards after a round's drafts take both drafters' two
  // threads too.
  EXPECT_EQ(here_teams.count(own + 4), 1u);
  // Elsewhere: every forward runs on the engine thread's own team.
  EXPECT_EQ(elsewhere_teams, std::set<int>{own});
}

// Drafted here, the first drafts take every core (the engine's thread
// drafts them) and each prompt is computed in the forward that verifies
// them; drafted elsewhere, the prompts are computed while the drafts are
// made. The tokens are the same.
TEST_F(ForwardCoresTest, PromptsAreComputedAheadOnlyWhileTheFirstDraftsAreMadeElsewhere) {
  const std::vector<GenRequest> requests = ::seed::testing::varied_requests(3, 1.0f, 16);
  std::set<int> teams;
  int here_prefills = -1, elsewhere_prefills = -1;
  const auto here = generate(requests, true, 1, &teams, &here_prefills);
  const auto elsewhere = generate(requests, false, 1, &teams, &elsewhere_prefills);
  EXPECT_EQ(here, elsewhere);
  EXPECT_EQ(here_prefills, 0);
  EXPECT_GE(elsewhere_prefills, 1);
}

}  // namespace
}  // namespace seed::spec
