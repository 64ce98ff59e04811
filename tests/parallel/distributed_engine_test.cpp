// The SEED engine with its drafters on draft ranks (run by ctest under
// mpirun -np 3 and -np 4: rank 0 coordinates, the others draft):
//   - greedy and sampled, seed and seed-batch produce exactly the tokens of
//     the single-process seed engine with the same seeds;
//   - with the prefix cache on and off on every rank, the same tokens;
//   - with model-free drafters (stand, lookup, aded) on the draft ranks,
//     greedy seed and seed-batch produce ar's tokens;
//   - STAND's and ADED's tables of a group learn from the verdicts of
//     requests drafted on other ranks (lessons), as one process's shared
//     table does, and only from their own with per-rank tables;
//   - a draft rank that stops answering mid-run is noticed within the rank
//     timeout, reported by rank, and the run still completes every request
//     with the single-process tokens;
//   - a draft rank loads its draft model before it serves;
//   - a draft rank drafts the slots of one draft message side by side, a
//     slot whose drafter failed there fails alone, and its answer carries
//     its drafters' CUDA graph warm-ups;
//   - an idle draft rank sleeps: its CPU time is a small part of its wait.
// Every rank writes the same tiny random models to its own temp folder.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <functional>
#include <thread>

#include "models/base/error.h"
#include "models/causal_lm.h"
#include "parallel/distributed_engine.h"
#include "parallel/draft_worker.h"
#include "parallel/mpi_event_loop.h"
#include "parallel/rank_layout.h"
#include "parallel/remote_drafter.h"
#include "parallel/wire.h"
#include "spec/drafters/model/draft_model_drafter.h"
#include "spec/engine/engine_factory.h"
#include "tests/parallel/mpi_world.h"
#include "tests/parallel/rank_usage_expectations.h"
#include "tests/spec/engine_fixtures.h"
#include "tests/spec/shared_prefix_requests.h"
#include "tests/throws_error.h"

namespace seed::parallel {
namespace {

namespace fs = std::filesystem;
using testing::expect_idle_rank_slept;
using testing::expect_usage_of_every_rank;
using testing::mpi_world;
using seed::testing::finished_tokens_of;
using seed::testing::throws_error;
using namespace std::chrono_literals;

constexpr int64_t kMaxNew = 16;
constexpr auto kRankTimeout = 30000ms;
constexpr auto kFaultTimeout = 2000ms;  // a test fault should be noticed quickly

class DistributedEngineTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    torch::NoGradGuard no_grad;
    dir_ = new fs::path(fs::temp_directory_path() /
                        ("seed_distributed_test_" + std::to_string(::getpid())));
    models_ = new spec::EngineOptions;
    const seed::testing::ModelPair pair = seed::testing::write_model_pair(*dir_, 64, 0.6);
    models_->target = pair.target;
    models_->draft = pair.draft;
    models_->draft_length = 3;
    edd_ = new std::string(seed::testing::write_edd(models_->target, *dir_ / "edd", 0));
  }
  static void TearDownTestSuite() {
    fs::remove_all(*dir_);
    delete dir_;
    delete models_;
    delete edd_;
  }

  static RankLayout layout() { return RankLayout::make(mpi_world().world_size(), 0); }
  static bool coordinator() { return mpi_world().world_rank() == 0; }

  static spec::EngineOptions options(const std::string& engine) {
    spec::EngineOptions o = *models_;
    o.engine = spec::EngineKind::parse(engine);
    o.drafters = static_cast<int>(layout().draft_ranks().size());
    // Whole chains every round: these tests count what the ranks draft.
    o.adaptive_draft_length = false;
    return o;
  }

  static std::vector<spec::GenRequest> requests(float temperature) {
    return seed::testing::varied_requests(6, temperature, kMaxNew);
  }

  // Draft rank 1 meets `fault` once it has answered 3 drafts: greedy and
  // sampled runs still give the single-process tokens, and the rank is
  // reported lost.
  void expect_run_completes_without_rank(DraftWorkerFault::Kind fault) {
    constexpr int kLostRank = 1;
    if (!coordinator()) {
      serve_worker_rank(mpi_world(), layout(), *models_,
                        mpi_world().world_rank() == kLostRank ? DraftWorkerFault{fault, 3} : DraftWorkerFault{});
      return;
    }
    Coordinator coordinator(mpi_world(), layout(), kFaultTimeout);
    for (float temperature : {0.0f, 1.0f}) {
      SCOPED_TRACE("temperature " + std::to_string(temperature));
      const auto expected = finished_tokens_of(spec::make_engine(options("seed"))->generate(requests(temperature)));
      EXPECT_EQ(finished_tokens_of(coordinator.make_engine(options("seed"))->generate(requests(temperature))),
                expected);
    }
    EXPECT_EQ(coordinator.lost_ranks(), std::vector<int>{kLostRank});
  }

  // Greedy and sampled, with top-token drafts and with drafts drawn from q:
  // seed and seed-batch with their drafters on the draft ranks give the
  // tokens of one process running seed. The test models' sampled
  // distributions are flat, so only greedy and drawn drafts are sure to be
  // accepted at times.
  static void expect_single_process_tokens(Coordinator& coordinator,
                                           const std::function<spec::EngineOptions(const std::string&)>& options_of) {
    struct Case { float temperature; bool drawn; };
    for (const Case c : {Case{0.0f, false}, Case{1.0f, false}, Case{1.0f, true}}) {
      const auto options_here = [&](const std::string& name) {
        spec::EngineOptions o = options_of(name);
        o.sample_drafts = c.drawn;
        return o;
      };
      const auto expected =
          finished_tokens_of(spec::make_engine(options_here("seed"))->generate(requests(c.temperature)));
      for (const std::string& name : {std::string("seed"), std::string("seed-batch")}) {
        SCOPED_TRACE(name + " at temperature " + std::to_string(c.temperature) + (c.drawn ? ", drawn drafts" : ""));
        const std::unique_ptr<spec::Engine> engine = coordinator.make_engine(options_here(name));
        EXPECT_EQ(finished_tokens_of(engine->generate(requests(c.temperature))), expected);
        if (c.temperature == 0.0f || c.drawn) {
          EXPECT_GT(engine->stats().accepted_tokens, 0);
        }
      }
    }
    EXPECT_TRUE(coordinator.lost_ranks().empty());
  }

  static fs::path* dir_;
  static spec::EngineOptions* models_;
  static std::string* edd_;  // an EDD draft for the target
};

fs::path* DistributedEngineTest::dir_ = nullptr;
std::string* DistributedEngineTest::edd_ = nullptr;
spec::EngineOptions* DistributedEngineTest::models_ = nullptr;

TEST_F(DistributedEngineTest, ProducesTheSingleProcessTokens) {
  ASSERT_GE(mpi_world().world_size(), 2) << "run under mpirun -np 3 or more";
  if (!coordinator()) {
    const WorkerStats stats = serve_worker_rank(mpi_world(), layout(), *models_);
    EXPECT_GT(stats.requests, 0) << "every draft rank should have drafted";
    EXPECT_LT(stats.batches, stats.requests) << "a round's drafts for this rank travel in one message";
    return;
  }
  Coordinator coordinator(mpi_world(), layout(), kRankTimeout);
  expect_single_process_tokens(coordinator, options);
  expect_usage_of_every_rank(coordinator.usage(), mpi_world().world_size());
  const MessageCounts counts = coordinator.counts();
  EXPECT_GT(counts.received, 0);
  EXPECT_GT(counts.sent, counts.received) << "start, verdict and finish need no reply";
}

// Pruned candidate trees travel in the start message; a given threshold
// makes the trees, and so the sampled tokens, those of one process.
TEST_F(DistributedEngineTest, PrunedTreesOnDraftRanksProduceTheSingleProcessTokens) {
  ASSERT_GE(mpi_world().world_size(), 2) << "run under mpirun -np 3 or more";
  if (!coordinator()) {
    serve_worker_rank(mpi_world(), layout(), *models_);
    return;
  }
  Coordinator coordinator(mpi_world(), layout(), kRankTimeout);
  const auto pruned = [](const std::string& name) {
    spec::EngineOptions o = options(name);
    o.tree = spec::kPrunedTree;
    o.pct_threshold = 0.05f;
    return o;
  };
  expect_single_process_tokens(coordinator, pruned);
}

// EDD drafts on the draft ranks: the target's hidden states travel with
// each verdict to the rank that drafts the slot.
TEST_F(DistributedEngineTest, EddDraftsOnDraftRanksProduceTheSingleProcessTokens) {
  ASSERT_GE(mpi_world().world_size(), 2) << "run under mpirun -np 3 or more";
  spec::EngineOptions models = *models_;
  models.draft = *edd_;
  if (!coordinator()) {
    serve_worker_rank(mpi_world(), layout(), models);
    return;
  }
  Coordinator coordinator(mpi_world(), layout(), kRankTimeout);
  for (const std::string tree : {"", spec::kPrunedTree}) {
    SCOPED_TRACE("tree '" + tree + "'");
    expect_single_process_tokens(coordinator, [&](const std::string& name) {
      spec::EngineOptions o = options(name);
      o.draft = *edd_;
      o.tree = tree;
      o.pct_threshold = 0.05f;
      return o;
    });
  }
}

TEST_F(DistributedEngineTest, PrefixCacheOnAndOffGiveTheSingleProcessTokens) {
  for (const bool cache : {true, false}) {
    spec::EngineOptions models = *models_;
    models.prefix_cache = cache;
    if (!coordinator()) {
      serve_worker_rank(mpi_world(), layout(), models);
      continue;
    }
    Coordinator coordinator(mpi_world(), layout(), kRankTimeout);
    for (const float temperature : {0.0f, 1.0f}) {
      const std::vector<spec::GenRequest> batch = seed::testing::shared_prefix_requests(temperature, kMaxNew);
      const auto expected = finished_tokens_of(spec::make_engine(options("seed"))->generate(batch));
      for (const std::string name : {"seed", "seed-batch"}) {
        SCOPED_TRACE(name + (cache ? ", cache on" : ", cache off") + " at temperature " + std::to_string(temperature));
        spec::EngineOptions o = options(name);
        o.prefix_cache = cache;
        const std::unique_ptr<spec::Engine> engine = coordinator.make_engine(o);
        EXPECT_EQ(finished_tokens_of(engine->generate(batch)), expected);
        const spec::PrefillStats prefill = engine->stats().prefill;
        if (cache) {
          EXPECT_LT(prefill.computed_tokens, prefill.prompt_tokens);
        } else {
          EXPECT_EQ(prefill.computed_tokens, prefill.prompt_tokens);
        }
      }
    }
  }
}

TEST_F(DistributedEngineTest, ModelFreeDraftersOnDraftRanksProduceTheSingleProcessTokens) {
  if (!coordinator()) {
    const WorkerStats stats = serve_worker_rank(mpi_world(), layout(), *models_);
    EXPECT_GT(stats.requests, 0) << "every draft rank should have drafted";
    return;
  }
  // One group, long enough for the tiny model to repeat itself, so that the
  // drafters have something to propose; STAND's tables learn from the
  // target's distributions that travel with each verdict.
  std::vector<spec::GenRequest> batch = requests(0.0f);
  for (spec::GenRequest& r : batch) {
    r.max_new_tokens = 40;
    r.group = 1;
  }
  Coordinator coordinator(mpi_world(), layout(), kRankTimeout);
  const auto expected = finished_tokens_of(spec::make_engine(options("ar"))->generate(batch));
  for (const spec::DrafterKind drafter :
       {spec::DrafterKind::kStand, spec::DrafterKind::kLookup, spec::DrafterKind::kAded}) {
    for (const std::string& name : {std::string("seed"), std::string("seed-batch")}) {
      SCOPED_TRACE(name + " --drafter " + drafter.name());
      spec::EngineOptions o = options(name);
      o.drafter = drafter;
      const std::unique_ptr<spec::Engine> engine = coordinator.make_engine(o);
      EXPECT_EQ(finished_tokens_of(engine->generate(batch)), expected);
      EXPECT_GT(engine->stats().accepted_tokens, 0);
    }
  }
  EXPECT_TRUE(coordinator.lost_ranks().empty());
}

// Two requests of one group, one after the other, land on different draft
// ranks (round-robin). With shared tables the second drafts from what the
// first's verdicts taught the first rank's table -- as it does in one
// process, where both drafters share one table -- so its drafted and
// accepted counts equal the single-process run's; with per-rank tables it
// starts from an empty table, exactly as the first request did. Once the
// group ends, every rank's table of it is gone: a third request drafts as
// the first did, on whichever rank.
TEST_F(DistributedEngineTest, ModelFreeTablesLearnFromEveryDraftRanksVerdictsUntilTheGroupEnds) {
  for (const DraftTables tables : {DraftTables::kShared, DraftTables::kPerRank}) {
    if (!coordinator()) {
      serve_worker_rank(mpi_world(), layout(), *models_);
      continue;
    }
    Coordinator coordinator(mpi_world(), layout(), kRankTimeout, tables);
    for (const spec::DrafterKind drafter : {spec::DrafterKind::kStand, spec::DrafterKind::kAded}) {
      SCOPED_TRACE(std::string("--drafter ") + drafter.name() +
                   (tables == DraftTables::kShared ? ", shared tables" : ", per-rank tables"));
      spec::GenRequest request = requests(0.0f)[3];
      request.max_new_tokens = 40;
      request.group = 20 + drafter.value();
      const auto expected = finished_tokens_of(spec::make_engine(options("ar"))->generate({request}));
      spec::EngineOptions o = options("seed");
      o.drafter = drafter;
      const std::unique_ptr<spec::Engine> local = spec::make_engine(o);
      const spec::RequestStats local_first = local->generate({request})[0].stats;
      const spec::RequestStats local_second = local->generate({request})[0].stats;
      ASSERT_GT(local_second.accepted_tokens, local_first.accepted_tokens) << "the second learns from the first";

      const std::unique_ptr<spec::Engine> engine = coordinator.make_engine(o);
      const std::vector<spec::Completion> first = engine->generate({request});
      const std::vector<spec::Completion> second = engine->generate({request});
      EXPECT_EQ(finished_tokens_of(first), expected);
      EXPECT_EQ(finished_tokens_of(second), expected);
      EXPECT_EQ(first[0].stats.drafted_tokens, local_first.drafted_tokens);
      EXPECT_EQ(first[0].stats.accepted_tokens, local_first.accepted_tokens);
      const spec::RequestStats& want = tables == DraftTables::kShared ? local_second : local_first;
      EXPECT_EQ(second[0].stats.drafted_tokens, want.drafted_tokens);
      EXPECT_EQ(second[0].stats.accepted_tokens, want.accepted_tokens);
      EXPECT_EQ(second[0].stats.target_forwards, want.target_forwards);
      engine->end_group(request.group);
      const std::vector<spec::Completion> third = engine->generate({request});
      EXPECT_EQ(finished_tokens_of(third), expected);
      EXPECT_EQ(third[0].stats.drafted_tokens, local_first.drafted_tokens);
      EXPECT_EQ(third[0].stats.accepted_tokens, local_first.accepted_tokens);
    }
    EXPECT_TRUE(coordinator.lost_ranks().empty());
  }
}

TEST_F(DistributedEngineTest, ADraftRankThatStopsAnsweringIsReportedAndTheRunCompletes) {
  expect_run_completes_without_rank(DraftWorkerFault::Kind::kStopAnswering);
}

TEST_F(DistributedEngineTest, ARankThatStartsServingAfterTheRankTimeoutIsWaitedForNotLost) {
  // As a rank loading a large model: it serves only after a few rank timeouts.
  constexpr int kSlowRank = 1;
  if (!coordinator()) {
    if (mpi_world().world_rank() == kSlowRank) std::this_thread::sleep_for(2 * kFaultTimeout);
    serve_worker_rank(mpi_world(), layout(), *models_);
    return;
  }
  Coordinator coordinator(mpi_world(), layout(), kFaultTimeout);
  coordinator.wait_for_workers();
  EXPECT_TRUE(coordinator.lost_ranks().empty());
  const auto expected = finished_tokens_of(spec::make_engine(options("seed"))->generate(requests(0.0f)));
  EXPECT_EQ(finished_tokens_of(coordinator.make_engine(options("seed"))->generate(requests(0.0f))), expected);
  EXPECT_TRUE(coordinator.lost_ranks().empty());
}

TEST_F(DistributedEngineTest, ADraftRankLoadsItsDraftModelBeforeItServes) {
  // So that loading falls inside the coordinator's wait for every rank to
  // serve: a draft folder that does not load fails the rank before it waits
  // for its first message. (Rank 0 sends none here.)
  if (coordinator()) return;
  spec::EngineOptions models = *models_;
  models.draft = (*dir_ / "no-such-draft").string();
  EXPECT_TRUE(throws_error([&] { serve_worker_rank(mpi_world(), layout(), models); }, ErrorKind::kNotFound,
                           {"no-such-draft"}));
}

TEST_F(DistributedEngineTest, ADraftRankThatDoesNotAnswerItsShutdownIsReportedLost) {
  constexpr int kLostRank = 1;
  if (!coordinator()) {
    DraftWorkerFault fault;
    if (mpi_world().world_rank() == kLostRank) fault = {DraftWorkerFault::Kind::kStopAnswering, 0};
    serve_worker_rank(mpi_world(), layout(), *models_, fault);
    return;
  }
  Coordinator coordinator(mpi_world(), layout(), kFaultTimeout);
  ASSERT_TRUE(coordinator.lost_ranks().empty());
  coordinator.shut_down();
  EXPECT_EQ(coordinator.lost_ranks(), std::vector<int>{kLostRank});
}

// Needs mpirun to survive a dead rank (the settings of
// parallel_distributed_kill_test_np3), so ctest runs it alone, by name.
TEST_F(DistributedEngineTest, DISABLED_ADraftRankThatDiesIsReportedAndTheRunCompletes) {
  expect_run_completes_without_rank(DraftWorkerFault::Kind::kKill);
}

// A drafter over the draft model whose start fails for one slot and whose
// proposals fail for another; it notes how many asks each batch holds, and
// it reports a CUDA graph warm-up for each start and two for each batch,
// as a model on a GPU meeting new shapes would.
class FaultyDrafter final : public spec::Drafter {
 public:
  FaultyDrafter(std::unique_ptr<spec::Drafter> inner, uint64_t bad_start, uint64_t bad_draft)
      : inner_(std::move(inner)), bad_start_(bad_start), bad_draft_(bad_draft) {}
  void start(uint64_t slot, const std::vector<int32_t>& tokens, const spec::DraftSettings& settings) override {
    SEED_CHECK(slot != bad_start_, kInvalidArgument) << "slot " << slot << " cannot start";
    inner_->start(slot, tokens, settings);
    warm_ups_ += 1;
  }
  spec::DraftTree propose(uint64_t slot, int max_depth) override { return inner_->propose(slot, max_depth); }
  std::vector<spec::DraftResult> propose_batch(const std::vector<spec::DraftAsk>& asks) override {
    batches.push_back(asks.size());
    warm_ups_ += 2;
    std::vector<spec::DraftResult> results = inner_->propose_batch(asks);
    for (size_t i = 0; i < asks.size(); ++i) {
      if (asks[i].slot != bad_draft_) continue;
      results[i] = {};
      results[i].error = std::make_exception_ptr(Error(ErrorKind::kInternal, "slot has no draft"));
    }
    return results;
  }
  void advance(uint64_t slot, const spec::Verdict& verdict) override { inner_->advance(slot, verdict); }
  void finish(uint64_t slot) override { inner_->finish(slot); }
  int64_t graph_warm_ups() const override { return warm_ups_; }

  std::vector<size_t> batches;

 private:
  std::unique_ptr<spec::Drafter> inner_;
  uint64_t bad_start_, bad_draft_;
  std::atomic<int64_t> warm_ups_{0};
};

TEST_F(DistributedEngineTest, ADraftMessagesSlotsAreDraftedSideBySideAndAFailedSlotFailsAlone) {
  // The answer also carries the rank's graph warm-ups since its last one:
  // those of the three starts that ran before it, and the batch's two.
  constexpr uint64_t kBadStart = 2, kBadDraft = 4;
  const auto draft_model = [] { return spec::make_draft_model_drafter(models::CausalLM::load(models_->draft)); };
  if (!coordinator()) {
    FaultyDrafter drafter(draft_model(), kBadStart, kBadDraft);
    serve_draft_requests([&](spec::DrafterKind) -> spec::Drafter& { return drafter; },
                         [](spec::DrafterKind, const spec::Lesson&) {}, [](uint64_t) {}, mpi_world().world_rank(), 0);
    // Slot 2 failed before it was asked: the others went as one batch.
    EXPECT_EQ(drafter.batches, std::vector<size_t>{3});
    return;
  }
  spec::DraftSettings settings;
  settings.sampling.temperature = 0.0f;
  settings.k_config = {1, 1, 1};
  const std::vector<spec::GenRequest> prompts = requests(0.0f);
  MpiEventLoop loop(mpi_world());
  for (const int rank : layout().draft_ranks()) {
    SCOPED_TRACE("draft rank " + std::to_string(rank));
    RemoteDrafter remote(loop, rank, kRankTimeout);
    const std::unique_ptr<spec::Drafter> local = draft_model();
    std::vector<spec::DraftAsk> asks;
    for (const uint64_t slot : {1, 2, 3, 4}) {
      remote.start(slot, prompts[slot].prompt_tokens, settings);
      local->start(slot, prompts[slot].prompt_tokens, settings);
      asks.push_back({slot, 3});
    }
    const std::vector<spec::DraftResult> results = remote.propose_batch(asks);
    ASSERT_EQ(results.size(), asks.size());
    for (const size_t i : {0, 2}) {
      ASSERT_FALSE(results[i].error) << "slot " << asks[i].slot;
      EXPECT_EQ(results[i].draft.tokens, local->propose(asks[i].slot, 3).tokens) << "slot " << asks[i].slot;
      EXPECT_EQ(results[i].draft.tokens.size(), 3u);
    }
    const std::string on_rank = "draft rank " + std::to_string(rank);
    EXPECT_TRUE(throws_error([&] { std::rethrow_exception(results[1].error); }, ErrorKind::kInternal,
                             {on_rank, "slot 2 cannot start"}));
    EXPECT_TRUE(throws_error([&] { std::rethrow_exception(results[3].error); }, ErrorKind::kInternal,
                             {on_rank, "slot has no draft"}));
    EXPECT_EQ(remote.graph_warm_ups(), 3 + 2);
    // The rank answers its shutdown with its usage, its last message.
    const wire::Message last = wire::decode(loop.call(rank, draft_request_tag(rank), wire::encode(wire::ShutdownMessage{}),
                                                      draft_reply_tag(rank), kRankTimeout),
                                            rank);
    const auto* usage = std::get_if<wire::UsageMessage>(&last);
    ASSERT_NE(usage, nullptr) << wire::message_name(last);
    ASSERT_EQ(usage->ranks.size(), 1u);
    EXPECT_EQ(usage->ranks[0].rank, rank);
  }
}

TEST_F(DistributedEngineTest, AnIdleDraftRankDoesNotSpin) {
  constexpr auto kIdle = 1500ms;
  if (!coordinator()) {
    expect_idle_rank_slept(serve_worker_rank(mpi_world(), layout(), *models_), mpi_world().world_rank());
    return;
  }
  Coordinator coordinator(mpi_world(), layout(), kRankTimeout);
  std::this_thread::sleep_for(kIdle);
}

}  // namespace
}  // namespace seed::parallel
