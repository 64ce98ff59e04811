// Several threads in one engine's generate() at once, as `seed run
// --concurrency N` drives it: every call gets exactly the completions it
// gets alone, for every engine, greedy and sampled; the scheduler serves
// the calls round-robin, so one call's single requests are not held up by
// another call's wide levels; a request failing in one call and a call
// cancelling its own requests leave the calls beside them as they were.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <set>
#include <thread>

#include "models/base/error.h"
#include "models/causal_lm.h"
#include "spec/drafters/model/draft_model_drafter.h"
#include "spec/engine/engine_factory.h"
#include "spec/engine/model_target.h"
#include "spec/engine/scheduled_engine.h"
#include "tests/spec/engine_fixtures.h"

namespace seed::spec {
namespace {

using ::seed::testing::ModelPair;
using ::seed::testing::tokens_of;

// The requests of "problem" p: a batch whose prompts, streams and kinds
// differ from problem to problem, as a search's levels do.
std::vector<GenRequest> problem_requests(int p, float temperature) {
  std::vector<GenRequest> out = ::seed::testing::varied_requests(2 + p % 4, temperature, 12 + p % 5);
  for (GenRequest& r : out) {
    for (int32_t& t : r.prompt_tokens) t = (t + 5 * p) % 64;
    r.seed = 1000 + static_cast<uint64_t>(p);
    r.group = static_cast<uint64_t>(p);
  }
  return out;
}

// Runs problems 0..problems-1 on `threads` threads, each problem two
// generate() calls (two levels), and returns every call's tokens.
std::vector<std::vector<std::vector<int32_t>>> run_problems(Engine& engine, int problems, int threads,
                                                            float temperature) {
  std::vector<std::vector<std::vector<int32_t>>> out(static_cast<size_t>(2 * problems));
  std::atomic<int> next{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      for (int p = next++; p < problems; p = next++) {
        for (int level = 0; level < 2; ++level) {
          out[static_cast<size_t>(2 * p + level)] =
              tokens_of(engine.generate(problem_requests(2 * p + level, temperature)));
        }
      }
    });
  }
  for (std::thread& t : pool) t.join();
  return out;
}

class ConcurrentCallsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { pairs_ = new ::seed::testing::TestModelPairs("seed_concurrent_calls_test"); }
  static void TearDownTestSuite() { delete pairs_; }

  static std::unique_ptr<Engine> engine(const std::string& name) {
    EngineOptions o;
    o.engine = EngineKind::parse(name);
    o.target = pairs_->pair.target;
    o.draft = pairs_->pair.draft;
    o.draft_length = 3;
    if (name == "mcsd") o.k_config = {2, 2, 1};
    o.drafters = 2;
    o.max_batch = 6;
    return make_engine(o);
  }

  static ::seed::testing::TestModelPairs* pairs_;
};

::seed::testing::TestModelPairs* ConcurrentCallsTest::pairs_ = nullptr;

TEST_F(ConcurrentCallsTest, EveryEngineGivesEachCallItsOwnTokensAtAnyConcurrency) {
  constexpr int kProblems = 8;
  for (const float temperature : {0.0f, 1.0f}) {
    for (const char* name : {"ar", "ar-batch", "sd", "mcsd", "seed", "seed-batch"}) {
      std::unique_ptr<Engine> e = engine(name);
      ASSERT_TRUE(e->serves_concurrent_calls()) << name;
      const auto serial = run_problems(*e, kProblems, 1, temperature);
      for (const int threads : {3, 8}) {
        EXPECT_EQ(run_problems(*e, kProblems, threads, temperature), serial)
            << name << " at temperature " << temperature << " with " << threads << " threads";
      }
      // Per-engine totals add up over the calls, whatever overlapped.
      e->reset_stats();
      const auto again = run_problems(*e, kProblems, 8, temperature);
      const EngineStats stats = e->stats();
      int64_t tokens = 0, requests = 0;
      for (const auto& call : again) {
        requests += static_cast<int64_t>(call.size());
        for (const auto& t : call) tokens += static_cast<int64_t>(t.size());
      }
      EXPECT_EQ(stats.requests, requests) << name;
      EXPECT_EQ(stats.generated_tokens, tokens) << name;
      EXPECT_GE(stats.peak_forward_sequences, 1) << name;
      EXPECT_EQ(stats.forward_sequences, stats.thought.target_forwards + stats.evaluation.target_forwards) << name;
      EXPECT_LE(stats.target_busy_s, stats.wall_s) << name;
    }
  }
}

// A target KV cache of 8 blocks (128 tokens) holds about two of these
// requests at their longest: the engine starts new ones only as running ones
// end, so eight problems at once give the tokens they give one at a time
// instead of filling the cache (which fails every call in flight).
TEST_F(ConcurrentCallsTest, ASmallKvCacheHoldsBackNewRequestsInsteadOfFailing) {
  for (const char* name : {"ar-batch", "seed-batch"}) {
    EngineOptions o;
    o.engine = EngineKind::parse(name);
    o.target = pairs_->pair.target;
    o.draft = pairs_->pair.draft;
    o.draft_length = 3;
    o.drafters = 2;
    models::KvCacheOptions small;
    small.max_blocks = 8;
    auto target = std::make_unique<ModelTarget>(models::CausalLM::load(o.target), small);
    ASSERT_EQ(target->kv_token_capacity(), 128);
    std::unique_ptr<Engine> bounded = make_engine(o, std::move(target), {});
    const auto alone = run_problems(*engine(name), 8, 1, 1.0f);
    EXPECT_EQ(run_problems(*bounded, 8, 8, 1.0f), alone) << name;
  }
}

TEST_F(ConcurrentCallsTest, EachRequestsTargetShareSumsToTheEnginesForwards) {
  std::unique_ptr<Engine> e = engine("seed-batch");
  std::atomic<int> next{0};
  std::vector<double> shares(8, 0.0);
  std::vector<std::thread> pool;
  for (int t = 0; t < 4; ++t) {
    pool.emplace_back([&] {
      for (int p = next++; p < 8; p = next++) {
        for (const Completion& c : e->generate(problem_requests(p, 0.0f))) shares[static_cast<size_t>(p)] += c.stats.target_share;
      }
    });
  }
  for (std::thread& t : pool) t.join();
  double total = 0;
  for (const double s : shares) total += s;
  EXPECT_NEAR(total, static_cast<double>(e->stats().target_forwards), 1e-6);
}

// A drafter that fails every proposal for requests of one prompt token.
class PoisonedDrafter : public Drafter {
 public:
  explicit PoisonedDrafter(std::shared_ptr<const models::CausalLM> model)
      : inner_(make_draft_model_drafter(std::move(model))) {}
  void start(uint64_t slot, const std::vector<int32_t>& tokens, const DraftSettings& settings) override {
    if (tokens.front() == kPoison) poisoned_.insert(slot);
    inner_->start(slot, tokens, settings);
  }
  DraftTree propose(uint64_t slot, int max_depth) override {
    if (poisoned_.count(slot)) SEED_FAIL(kIo) << "draft weights vanished";
    return inner_->propose(slot, max_depth);
  }
  void advance(uint64_t slot, const Verdict& verdict) override { inner_->advance(slot, verdict); }
  void finish(uint64_t slot) override {
    poisoned_.erase(slot);
    inner_->finish(slot);
  }
  static constexpr int32_t kPoison = 63;

 private:
  std::unique_ptr<Drafter> inner_;
  std::set<uint64_t> poisoned_;
};

TEST_F(ConcurrentCallsTest, AFailingRequestOrAThrowingCallLeavesTheCallsBesideItAsTheyWere) {
  auto target = std::shared_ptr<models::CausalLM>(models::CausalLM::load(pairs_->pair.target));
  const std::shared_ptr<const models::CausalLM> draft = models::CausalLM::load(pairs_->pair.draft);
  RunSettings settings;
  settings.k_config = {1, 1, 1};
  std::vector<std::unique_ptr<Drafter>> drafters;
  drafters.push_back(std::make_unique<PoisonedDrafter>(draft));
  auto e = ScheduledEngine::seed("seed", std::make_unique<ModelTarget>(target), std::move(drafters), settings,
                                 Scheduler(SchedulePolicy::kBatch, 4), 1);
  const auto alone = run_problems(*e, 6, 1, 1.0f);
  std::vector<GenRequest> poisoned = problem_requests(100, 1.0f);
  poisoned[0].prompt_tokens.front() = PoisonedDrafter::kPoison;
  std::vector<GenRequest> malformed = problem_requests(101, 1.0f);
  malformed[1].max_new_tokens = -1;
  std::vector<Completion> poisoned_out;
  bool malformed_threw = false, callback_threw = false;
  std::thread bad([&] {
    poisoned_out = e->generate(poisoned);
    try {
      e->generate(malformed);
    } catch (const Error&) {
      malformed_threw = true;
    }
    try {
      e->generate(problem_requests(102, 1.0f), [](size_t, const Completion&) -> std::vector<size_t> {
        SEED_FAIL(kInvalidArgument) << "the caller's callback failed";
      });
    } catch (const Error& error) {
      callback_threw = std::string(error.what()).find("callback failed") != std::string::npos;
    }
  });
  const auto beside = run_problems(*e, 6, 3, 1.0f);
  bad.join();
  EXPECT_EQ(beside, alone);
  ASSERT_EQ(poisoned_out.size(), poisoned.size());
  EXPECT_EQ(poisoned_out[0].finish, FinishReason::kError);
  EXPECT_NE(poisoned_out[0].error.find("draft weights vanished"), std::string::npos);
  for (size_t i = 1; i < poisoned_out.size(); ++i) EXPECT_NE(poisoned_out[i].finish, FinishReason::kError) << i;
  EXPECT_TRUE(malformed_threw);
  EXPECT_TRUE(callback_threw);
  // The engine goes on serving.
  EXPECT_EQ(run_problems(*e, 6, 2, 1.0f), alone);
}

TEST_F(ConcurrentCallsTest, ACallCancellingItsRequestsLeavesTheOthersTokensAlone) {
  std::unique_ptr<Engine> e = engine("seed");
  const auto alone = run_problems(*e, 6, 1, 1.0f);
  std::vector<Completion> cancelled;
  std::thread early_stop([&] {
    std::vector<GenRequest> batch = ::seed::testing::varied_requests(8, 1.0f, 30);
    bool stopped = false;
    cancelled = e->generate(batch, [&](size_t, const Completion&) {
      std::vector<size_t> rest;
      if (!stopped) {
        for (size_t i = 0; i < 8; ++i) rest.push_back(i);
      }
      stopped = true;
      return rest;
    });
  });
  const auto beside = run_problems(*e, 6, 3, 1.0f);
  early_stop.join();
  EXPECT_EQ(beside, alone);
  int finished = 0;
  for (const Completion& c : cancelled) finished += c.finish == FinishReason::kCancelled ? 0 : 1;
  EXPECT_EQ(finished, 1);
}

}  // namespace
}  // namespace seed::spec
