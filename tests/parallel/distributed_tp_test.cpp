// Every engine with its target split over a tensor-parallel group (run by
// ctest under mpirun -np 4 --tp 2: rank 0 coordinates, ranks 1-2 are the
// target group, rank 3 drafts; under -np 3 no draft rank is left and seed
// drafts on local threads):
//   - greedy, every engine produces exactly the single-process tokens;
//   - sampled (temperature 1), seed and sd too: the group's logits equal
//     the whole model's to ~1e-6 on these tiny models, so the verifier's
//     draws agree (a draw this close to a boundary would be a rare flake);
//   - with the prefix cache on and off on every rank, the single-process
//     tokens; only "on" computes fewer prompt tokens than it was given;
//   - model-free drafters (stand, lookup, aded), greedy: ar's tokens;
//   - rank 0 learns every rank's usage (busy time) on request;
//   - idle target group ranks sleep: the peers' wait for the leader's next
//     call (a non-blocking broadcast) costs a small part of their CPU time.
// Every rank writes the same tiny random models to its own temp folder.
#include <gtest/gtest.h>
#include <torch/torch.h>
#include <unistd.h>

#include <filesystem>
#include <thread>

#include "parallel/distributed_engine.h"
#include "spec/engine/engine_factory.h"
#include "tests/parallel/mpi_world.h"
#include "tests/parallel/rank_usage_expectations.h"
#include "tests/spec/engine_fixtures.h"
#include "tests/spec/shared_prefix_requests.h"

namespace seed::parallel {
namespace {

namespace fs = std::filesystem;
using testing::expect_idle_rank_slept;
using testing::expect_usage_of_every_rank;
using testing::mpi_world;
using seed::testing::finished_tokens_of;
using namespace std::chrono_literals;

constexpr int kTp = 2;
constexpr auto kRankTimeout = 30000ms;

class DistributedTpTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    torch::NoGradGuard no_grad;
    dir_ = new fs::path(fs::temp_directory_path() / ("seed_distributed_tp_test_" + std::to_string(::getpid())));
    models_ = new spec::EngineOptions;
    const seed::testing::ModelPair pair = seed::testing::write_model_pair(*dir_, 64, 0.6);
    models_->target = pair.target;
    models_->draft = pair.draft;
    models_->draft_length = 3;
    seed::testing::write_edd(models_->target, *dir_ / "edd", 0);
  }
  static void TearDownTestSuite() {
    fs::remove_all(*dir_);
    delete dir_;
    delete models_;
  }

  static RankLayout layout() { return RankLayout::make(mpi_world().world_size(), kTp); }

  static spec::EngineOptions options(const std::string& engine) {
    spec::EngineOptions o = *models_;
    o.engine = spec::EngineKind::parse(engine);
    o.drafters = 2;  // local drafter threads when no draft rank is left
    return o;
  }

  static std::vector<spec::GenRequest> requests(float temperature) {
    return seed::testing::varied_requests(4, temperature, 12);
  }

  static fs::path* dir_;
  static spec::EngineOptions* models_;
};

fs::path* DistributedTpTest::dir_ = nullptr;
spec::EngineOptions* DistributedTpTest::models_ = nullptr;

TEST_F(DistributedTpTest, EveryEngineProducesTheSingleProcessTokens) {
  ASSERT_GE(mpi_world().world_size(), 1 + kTp) << "run under mpirun -np 3 or more";
  if (mpi_world().world_rank() != 0) {
    const WorkerStats stats = serve_worker_rank(mpi_world(), layout(), *models_);
    EXPECT_GT(stats.requests, 0) << "rank " << mpi_world().world_rank() << " should have verified or drafted";
    return;
  }
  Coordinator coordinator(mpi_world(), layout(), kRankTimeout);
  const std::vector<std::pair<float, std::vector<std::string>>> cases = {
      {0.0f, {"ar", "ar-batch", "sd", "mcsd", "seed", "seed-batch"}}, {1.0f, {"sd", "seed", "seed-batch"}}};
  for (const auto& [temperature, engines] : cases) {
    for (const std::string& name : engines) {
      SCOPED_TRACE(name + " at temperature " + std::to_string(temperature));
      const auto expected = finished_tokens_of(spec::make_engine(options(name))->generate(requests(temperature)));
      const std::unique_ptr<spec::Engine> engine = coordinator.make_engine(options(name));
      EXPECT_EQ(finished_tokens_of(engine->generate(requests(temperature))), expected);
    }
  }
  EXPECT_FALSE(coordinator.target_lost());
  EXPECT_TRUE(coordinator.lost_ranks().empty());
  EXPECT_GT(coordinator.counts().received, 0) << "the leader answers every verify";
  expect_usage_of_every_rank(coordinator.usage(), mpi_world().world_size());
}

// An EDD draft over a tensor-parallel target: the group's leader has the
// whole hidden states and sends them with each verdict.
TEST_F(DistributedTpTest, EddDraftsProduceTheSingleProcessTokens) {
  ASSERT_GE(mpi_world().world_size(), 1 + kTp) << "run under mpirun -np 3 or more";
  spec::EngineOptions models = *models_;
  models.draft = (*dir_ / "edd").string();
  if (mpi_world().world_rank() != 0) {
    serve_worker_rank(mpi_world(), layout(), models);
    return;
  }
  Coordinator coordinator(mpi_world(), layout(), kRankTimeout);
  // Top-token and drawn drafts; the EDD's sampled distributions are flat,
  // so only greedy and drawn drafts are sure to be accepted at times.
  struct Case { float temperature; bool drawn; };
  for (const Case c : {Case{0.0f, false}, Case{1.0f, false}, Case{1.0f, true}}) {
    for (const std::string name : {"sd", "seed", "seed-batch"}) {
      SCOPED_TRACE(name + " at temperature " + std::to_string(c.temperature) + (c.drawn ? ", drawn drafts" : ""));
      spec::EngineOptions o = options(name);
      o.draft = models.draft;
      o.sample_drafts = c.drawn;
      const auto expected = finished_tokens_of(spec::make_engine(o)->generate(requests(c.temperature)));
      const std::unique_ptr<spec::Engine> engine = coordinator.make_engine(o);
      EXPECT_EQ(finished_tokens_of(engine->generate(requests(c.temperature))), expected);
      if (c.temperature == 0.0f || c.drawn) {
        EXPECT_GT(engine->stats().accepted_tokens, 0);
      }
    }
  }
  EXPECT_FALSE(coordinator.target_lost());
}

TEST_F(DistributedTpTest, PrefixCacheOnAndOffGiveTheSingleProcessTokens) {
  for (const bool cache : {true, false}) {
    spec::EngineOptions models = *models_;
    models.prefix_cache = cache;
    if (mpi_world().world_rank() != 0) {
      serve_worker_rank(mpi_world(), layout(), models);
      continue;
    }
    Coordinator coordinator(mpi_world(), layout(), kRankTimeout);
    for (const float temperature : {0.0f, 1.0f}) {
      const std::vector<spec::GenRequest> batch = seed::testing::shared_prefix_requests(temperature, 8);
      for (const std::string name : {"ar", "ar-batch", "sd", "mcsd", "seed", "seed-batch"}) {
        SCOPED_TRACE(name + (cache ? ", cache on" : ", cache off") + " at temperature " + std::to_string(temperature));
        const std::unique_ptr<spec::Engine> local = spec::make_engine(options(name));
        const auto expected = finished_tokens_of(local->generate(batch));
        spec::EngineOptions o = options(name);
        o.prefix_cache = cache;
        const std::unique_ptr<spec::Engine> engine = coordinator.make_engine(o);
        EXPECT_EQ(finished_tokens_of(engine->generate(batch)), expected);
        const spec::PrefillStats prefill = engine->stats().prefill;
        EXPECT_EQ(prefill.prompt_tokens, seed::testing::prompt_tokens_of(batch));
        // The group's counters reach the coordinator: without drafts the
        // rounds do not depend on timing, so they are the local engine's.
        if (name == "ar" || name == "ar-batch") {
          EXPECT_EQ(prefill.verify_rounds, local->stats().prefill.verify_rounds);
        }
        if (cache) {
          EXPECT_LT(prefill.computed_tokens, prefill.prompt_tokens);
        } else {
          EXPECT_EQ(prefill.computed_tokens, prefill.prompt_tokens);
        }
      }
    }
  }
}

// Model-free drafters with the target on the group: STAND learns from the
// top entries the group's leader sends with each verdict (under -np 4 they
// travel on to draft rank 3).
TEST_F(DistributedTpTest, ModelFreeDraftersProduceArsTokens) {
  if (mpi_world().world_rank() != 0) {
    serve_worker_rank(mpi_world(), layout(), *models_);
    return;
  }
  std::vector<spec::GenRequest> batch = requests(0.0f);
  for (spec::GenRequest& r : batch) {
    r.max_new_tokens = 40;  // long enough for the tiny model to repeat itself
    r.group = 1;
  }
  const auto expected = finished_tokens_of(spec::make_engine(options("ar"))->generate(batch));
  Coordinator coordinator(mpi_world(), layout(), kRankTimeout);
  for (const spec::DrafterKind drafter :
       {spec::DrafterKind::kStand, spec::DrafterKind::kLookup, spec::DrafterKind::kAded}) {
    for (const std::string name : {"sd", "seed", "seed-batch"}) {
      SCOPED_TRACE(name + " --drafter " + drafter.name());
      spec::EngineOptions o = options(name);
      o.drafter = drafter;
      const std::unique_ptr<spec::Engine> engine = coordinator.make_engine(o);
      EXPECT_EQ(finished_tokens_of(engine->generate(batch)), expected);
      if (drafter == spec::DrafterKind::kStand) {
        EXPECT_GT(engine->stats().accepted_tokens, 0) << "STAND drafts from what the group's verdicts taught it";
      }
    }
  }
  EXPECT_TRUE(coordinator.lost_ranks().empty());
}

TEST_F(DistributedTpTest, IdleTargetGroupRanksDoNotSpin) {
  constexpr auto kIdle = 1500ms;
  if (mpi_world().world_rank() != 0) {
    expect_idle_rank_slept(serve_worker_rank(mpi_world(), layout(), *models_), mpi_world().world_rank());
    return;
  }
  Coordinator coordinator(mpi_world(), layout(), kRankTimeout);
  std::this_thread::sleep_for(kIdle);
}

}  // namespace
}  // namespace seed::parallel
