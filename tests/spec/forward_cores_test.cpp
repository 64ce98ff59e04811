// A SEED engine's forward takes its idle drafter threads' cores (TeamThreads)
// only where those drafters draft in this process: a proxy whose drafts
// are made elsewhere (a draft rank under mpirun) leaves no core idle here,
// and a forward widened onto it would run more threads than this
// process has cores. For the same reason the target computes new prompts
// ahead of their first drafts only while those are made elsewhere.
#include <gtest/gtest.h>
#include <omp.h>

#include <chrono>
#include <mutex>
#include <set>
#include <thread>

#include "models/causal_lm.h"
#include "spec/drafters/model/draft_model_drafter.h"
#include "spec/engine/engine_factory.h"
#include "spec/engine/model_target.h"
#include "spec/engine/scheduled_engine.h"
#include "spec/engine/team_threads.h"
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

// A target whose forwards on more than one thread take `stall` longer once
// `after` of them have run, as where other processes hold the cores (one
// descheduled thread of a team stalls the rest); it notes each forward's
// team.
class StallingTarget final : public ::seed::testing::ForwardingTarget {
 public:
  StallingTarget(std::unique_ptr<Target> inner, size_t after, std::chrono::milliseconds stall)
      : ForwardingTarget(std::move(inner)), after_(after), stall_(stall) {}
  std::vector<Verdict> verify(const std::vector<VerifyItem>& items) override {
    const int team = omp_get_max_threads();
    teams_.push_back(team);
    if (teams_.size() > after_ && team > 1) std::this_thread::sleep_for(stall_);
    return ForwardingTarget::verify(items);
  }
  const std::vector<int>& teams() const { return teams_; }

 private:
  size_t after_;
  std::chrono::milliseconds stall_;
  std::vector<int> teams_;
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
  // Elsewhere: no forward runs on more than the engine thread's own team.
  EXPECT_LE(*elsewhere_teams.rbegin(), own);
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

// Forwards of the whole team that stall move to one thread (but for
// probes of the team, rarer and rarer), and the tokens are the same.
TEST_F(ForwardCoresTest, ForwardsThatStallOnTheTeamMoveToOneThreadAndKeepTheirTokens) {
  const TeamThreads two(2);
  const std::vector<GenRequest> requests = ::seed::testing::varied_requests(2, 0.0f, 64);
  RunSettings settings;
  const auto reference = ::seed::testing::tokens_of(
      ScheduledEngine::serial("ar", std::make_unique<ModelTarget>(models::CausalLM::load(pairs_->pair.target)),
                              nullptr, settings)
          ->generate(requests));
  constexpr size_t kAfter = 8;
  auto target = std::make_unique<StallingTarget>(
      std::make_unique<ModelTarget>(models::CausalLM::load(pairs_->pair.target)), kAfter,
      std::chrono::milliseconds(40));
  StallingTarget* stalling = target.get();
  auto engine = ScheduledEngine::serial("ar", std::move(target), nullptr, settings);
  EXPECT_EQ(::seed::testing::tokens_of(engine->generate(requests)), reference);
  const std::vector<int>& teams = stalling->teams();
  ASSERT_GT(teams.size(), 100u);
  EXPECT_EQ(teams.front(), 2);
  int on_the_team = 0;
  for (size_t i = kAfter; i < teams.size(); ++i) on_the_team += teams[i] > 1 ? 1 : 0;
  // Two stalled forwards, then probes of the team (two forwards each) 16,
  // 32, 64 forwards apart: a few in a hundred, where every forward would
  // stall without the choice.
  EXPECT_GE(on_the_team, 2);
  EXPECT_LE(on_the_team, 16);
}

}  // namespace
}  // namespace seed::spec
