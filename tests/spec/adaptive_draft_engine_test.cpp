// The engines' adaptive draft length (DraftLengthPolicy) end to end: a
// drafter far slower than the target's forwards makes greedy rounds draft
// nothing, with `ar`'s tokens; free drafts that are always accepted, on a
// target whose forwards cost the same with or without them, keep being
// drafted after the rounds the policy explores without, and their
// drafter sees every verdict in order when it drafts again; requests
// whose drafts are rejected stop drafting while the others go on; drafts and
// forwards that warm up a CUDA graph are not timed; sampled
// requests keep their whole draft length, so a seed gives the same tokens
// either way.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <thread>

#include "models/causal_lm.h"
#include "spec/drafters/model/draft_model_drafter.h"
#include "spec/engine/engine_factory.h"
#include "spec/engine/model_target.h"
#include "spec/engine/scheduled_engine.h"
#include "tests/spec/engine_fixtures.h"
#include "tests/spec/forwarding.h"

namespace seed::spec {
namespace {

using ::seed::testing::tokens_of;

// What a drafter is given, noted as it drafts: each slot's tokens (its
// start's, then its verdicts'), and the proposals that came after more
// than one verdict (rounds that drafted nothing). Thread-safe.
class RoundLog {
 public:
  void started(uint64_t slot, const std::vector<int32_t>& tokens) {
    std::lock_guard<std::mutex> lock(mutex_);
    seen_[slot] = tokens;
    unproposed_[slot] = 0;
  }
  // The slot's tokens so far.
  std::vector<int32_t> proposing(uint64_t slot, int max_depth) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (max_depth > 0 && unproposed_[slot] > 1) ++proposals_after_skipped_rounds_;
    unproposed_[slot] = 0;
    return seen_[slot];
  }
  void advanced(uint64_t slot, const Verdict& verdict) {
    std::lock_guard<std::mutex> lock(mutex_);
    seen_[slot].insert(seen_[slot].end(), verdict.tokens.begin(), verdict.tokens.end());
    ++unproposed_[slot];
  }
  std::vector<int32_t> seen(uint64_t slot) {
    std::lock_guard<std::mutex> lock(mutex_);
    return seen_[slot];
  }
  int proposals_after_skipped_rounds() {
    std::lock_guard<std::mutex> lock(mutex_);
    return proposals_after_skipped_rounds_;
  }

 private:
  std::mutex mutex_;
  std::map<uint64_t, std::vector<int32_t>> seen_;
  std::map<uint64_t, int> unproposed_;
  int proposals_after_skipped_rounds_ = 0;
};

// A draft model's drafter whose every proposal of a token or more first
// waits `latency`, so that a draft step costs many target forwards; with
// `warms_up`, as a model warming up a CUDA graph in each would.
class SlowDrafter final : public Drafter {
 public:
  SlowDrafter(std::shared_ptr<const models::CausalLM> draft, std::chrono::milliseconds latency, bool warms_up = false)
      : inner_(make_draft_model_drafter(std::move(draft))), latency_(latency), warms_up_(warms_up) {}
  void start(uint64_t slot, const std::vector<int32_t>& tokens, const DraftSettings& settings) override {
    log.started(slot, tokens);
    inner_->start(slot, tokens, settings);
  }
  DraftTree propose(uint64_t slot, int max_depth) override {
    if (max_depth > 0) std::this_thread::sleep_for(latency_), ++proposals_;
    log.proposing(slot, max_depth);
    return inner_->propose(slot, max_depth);
  }
  int64_t graph_warm_ups() const override { return warms_up_ ? proposals_.load() : 0; }
  void advance(uint64_t slot, const Verdict& verdict) override {
    log.advanced(slot, verdict);
    inner_->advance(slot, verdict);
  }
  void finish(uint64_t slot) override { inner_->finish(slot); }

  RoundLog log;

 private:
  std::unique_ptr<Drafter> inner_;
  std::chrono::milliseconds latency_;
  bool warms_up_;
  std::atomic<int64_t> proposals_{0};
};

// A drafter that knows each request's whole greedy sequence (prompt and
// `ar`'s tokens) and proposes its next tokens from the tokens it was
// given: drafts that cost nothing and are all accepted for as long as it
// is handed every verdict in order. With `wrong_odd`, the requests of odd
// index get every drafted token wrong (all rejected); with `latency`, a
// proposal of a token or more first waits that long.
class OracleDrafter final : public Drafter {
 public:
  explicit OracleDrafter(std::vector<std::vector<int32_t>> wholes, bool wrong_odd = false,
                         std::chrono::microseconds latency = {})
      : wholes_(std::move(wholes)), wrong_odd_(wrong_odd), latency_(latency),
        drafted_(wholes_.size()) {}
  void start(uint64_t slot, const std::vector<int32_t>& tokens, const DraftSettings&) override {
    log.started(slot, tokens);
  }
  DraftTree propose(uint64_t slot, int max_depth) override {
    if (max_depth > 0) std::this_thread::sleep_for(latency_);
    const std::vector<int32_t> seen = log.proposing(slot, max_depth);
    DraftTree draft;
    draft.deterministic = true;
    for (size_t j = 0; j < wholes_.size(); ++j) {
      const std::vector<int32_t>& whole = wholes_[j];
      if (whole.size() < seen.size() || !std::equal(seen.begin(), seen.end(), whole.begin())) continue;
      if (max_depth > 0) {
        std::lock_guard<std::mutex> lock(mutex_);
        ++drafted_[j];
      }
      const bool wrong = wrong_odd_ && j % 2 == 1;
      const size_t end = std::min(whole.size(), seen.size() + static_cast<size_t>(std::max(max_depth, 0)));
      for (size_t i = seen.size(); i < end; ++i) {
        draft.tokens.push_back(wrong ? (whole[i] == 0 ? 1 : whole[i] - 1) : whole[i]);
        draft.parents.push_back(static_cast<int32_t>(draft.tokens.size()) - 2);
      }
      break;
    }
    return draft;
  }
  void advance(uint64_t slot, const Verdict& verdict) override { log.advanced(slot, verdict); }
  void finish(uint64_t) override {}

  // Request j's rounds that drafted a token or more (a round that drafts
  // nothing asks the drafter for nothing).
  int64_t drafted_rounds(size_t j) {
    std::lock_guard<std::mutex> lock(mutex_);
    return drafted_[j];
  }

  RoundLog log;

 private:
  std::vector<std::vector<int32_t>> wholes_;
  bool wrong_odd_;
  std::chrono::microseconds latency_;
  std::mutex mutex_;
  std::vector<int64_t> drafted_;  // rounds that drafted, per request
};

// A target whose every forward first waits `latency`, as one bound by its
// launches (a GPU's at small batches): a forward of drafts costs little
// more than one without, however busy the machine is.
class LaunchBoundTarget final : public ::seed::testing::ForwardingTarget {
 public:
  LaunchBoundTarget(std::unique_ptr<Target> inner, std::chrono::milliseconds latency)
      : ForwardingTarget(std::move(inner)), latency_(latency) {}
  std::vector<Verdict> verify(const std::vector<VerifyItem>& items) override {
    std::this_thread::sleep_for(latency_);
    return ForwardingTarget::verify(items);
  }

 private:
  std::chrono::milliseconds latency_;
};

// A target whose every forward warms up a CUDA graph, as far as the
// engine can tell (PrefillStats::graph_warm_ups).
class WarmingTarget final : public ::seed::testing::ForwardingTarget {
 public:
  using ForwardingTarget::ForwardingTarget;
  std::vector<Verdict> verify(const std::vector<VerifyItem>& items) override {
    ++forwards_;
    return ForwardingTarget::verify(items);
  }
  PrefillStats prefill_stats() const override {
    PrefillStats stats = ForwardingTarget::prefill_stats();
    stats.graph_warm_ups = forwards_;
    return stats;
  }

 private:
  int64_t forwards_ = 0;  // the engine's loop alone calls verify
};

class AdaptiveDraftEngineTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { pairs_ = new ::seed::testing::TestModelPairs("seed_adaptive_draft_test"); }
  static void TearDownTestSuite() { delete pairs_; }

  // Which of the pair warms up a CUDA graph in every call, as the engine sees it.
  enum class WarmUps { kNone, kDrafts, kForwards };

  // seed-batch over the test pair with one SlowDrafter (kept in `drafter`),
  // chains of three, forwards of up to `max_batch` drafts.
  static std::unique_ptr<ScheduledEngine> engine(bool adaptive, std::chrono::milliseconds latency,
                                                 SlowDrafter** drafter, size_t max_batch = 16,
                                                 bool sample_drafts = false, WarmUps warm_ups = WarmUps::kNone) {
    auto model = std::shared_ptr<models::CausalLM>(models::CausalLM::load(pairs_->pair.target));
    std::unique_ptr<Target> target = std::make_unique<ModelTarget>(model);
    if (warm_ups == WarmUps::kForwards) target = std::make_unique<WarmingTarget>(std::move(target));
    auto slow = std::make_unique<SlowDrafter>(models::CausalLM::load(pairs_->pair.draft), latency,
                                              warm_ups == WarmUps::kDrafts);
    *drafter = slow.get();
    std::vector<std::unique_ptr<Drafter>> drafters;
    drafters.push_back(std::move(slow));
    RunSettings settings;
    settings.k_config = {1, 1, 1};
    settings.adaptive_draft_length = adaptive;
    settings.sample_drafts = sample_drafts;
    return ScheduledEngine::seed("seed-batch", std::move(target), std::move(drafters), settings,
                                 Scheduler(SchedulePolicy::kBatch, max_batch), 1);
  }

  static std::vector<int32_t> ar_tokens(const GenRequest& request) {
    EngineOptions o;
    o.engine = EngineKind::parse("ar");
    o.target = pairs_->pair.target;
    return make_engine(o)->generate({request}).front().tokens;
  }

  // Each request's whole greedy sequence: its prompt, then `ar`'s tokens.
  static std::vector<std::vector<int32_t>> wholes_of(const std::vector<GenRequest>& requests) {
    std::vector<std::vector<int32_t>> wholes;
    for (const GenRequest& request : requests) {
      wholes.push_back(request.prompt_tokens);
      const std::vector<int32_t> ar = ar_tokens(request);
      wholes.back().insert(wholes.back().end(), ar.begin(), ar.end());
    }
    return wholes;
  }

  // seed-batch drafting chains of up to three with `oracle` (kept in
  // `drafter`), on the test pair's target held to 8 ms a forward.
  static std::unique_ptr<ScheduledEngine> oracle_engine(std::unique_ptr<OracleDrafter> oracle,
                                                        OracleDrafter** drafter) {
    *drafter = oracle.get();
    std::vector<std::unique_ptr<Drafter>> drafters;
    drafters.push_back(std::move(oracle));
    RunSettings settings;
    settings.k_config = {1, 1, 1};
    settings.adaptive_draft_length = true;
    auto target = std::make_unique<LaunchBoundTarget>(
        std::make_unique<ModelTarget>(models::CausalLM::load(pairs_->pair.target)), std::chrono::milliseconds(8));
    return ScheduledEngine::seed("seed-batch", std::move(target), std::move(drafters), settings,
                                 Scheduler(SchedulePolicy::kBatch, 16), 1);
  }

  // What `whole` holds after `request`'s prompt.
  static std::vector<int32_t> generated_of(const std::vector<int32_t>& whole, const GenRequest& request) {
    return {whole.begin() + static_cast<std::ptrdiff_t>(request.prompt_tokens.size()), whole.end()};
  }

  static ::seed::testing::TestModelPairs* pairs_;
};

::seed::testing::TestModelPairs* AdaptiveDraftEngineTest::pairs_ = nullptr;

// Greedy and sampled alike: the length never changes a token.
class DraftsThatCostManyForwards : public AdaptiveDraftEngineTest, public ::testing::WithParamInterface<float> {};

TEST_P(DraftsThatCostManyForwards, LeaveRoundsUndraftedWithArsTokens) {
  // Forwards of two drafts: enough forwards for the policy to explore a
  // draft after rounds without.
  const std::vector<GenRequest> requests = ::seed::testing::varied_requests(6, GetParam(), 160);
  SlowDrafter* fixed_drafter = nullptr;
  SlowDrafter* adaptive_drafter = nullptr;
  auto fixed = engine(false, std::chrono::milliseconds(2), &fixed_drafter, 2);
  auto adaptive = engine(true, std::chrono::milliseconds(2), &adaptive_drafter, 2);
  const std::vector<Completion> fixed_out = fixed->generate(requests);
  const std::vector<Completion> adaptive_out = adaptive->generate(requests);
  for (size_t i = 0; i < requests.size(); ++i) {
    const std::vector<int32_t> ar = ar_tokens(requests[i]);
    EXPECT_EQ(fixed_out[i].tokens, ar) << "request " << i;
    EXPECT_EQ(adaptive_out[i].tokens, ar) << "request " << i;
    // What the drafter was given, deferred verdicts included, is the
    // prompt and the request's tokens in order.
    std::vector<int32_t> whole = requests[i].prompt_tokens;
    whole.insert(whole.end(), ar.begin(), ar.end());
    const std::vector<int32_t> seen = adaptive_drafter->log.seen(i);
    ASSERT_GE(seen.size(), requests[i].prompt_tokens.size()) << "request " << i;
    ASSERT_LE(seen.size(), whole.size()) << "request " << i;
    EXPECT_EQ(seen, std::vector<int32_t>(whole.begin(), whole.begin() + static_cast<std::ptrdiff_t>(seen.size())))
        << "request " << i;
  }
  // A draft step costs several of these forwards: the first rounds draft
  // (nothing is measured yet), then only the explorations do.
  EXPECT_LT(3 * adaptive->stats().drafted_tokens, fixed->stats().drafted_tokens);
  EXPECT_GT(adaptive->stats().drafted_tokens, 0);
  EXPECT_EQ(fixed_drafter->log.proposals_after_skipped_rounds(), 0);
}

INSTANTIATE_TEST_SUITE_P(Temperatures, DraftsThatCostManyForwards, ::testing::Values(0.0f, 1.0f));

TEST_F(AdaptiveDraftEngineTest, DraftsAndForwardsThatWarmUpAGraphAreNotTimed) {
  // The dear drafts of the test above, which stop drafting once timed;
  // where every draft, or every forward, warms up a CUDA graph, neither is
  // a measure, and the rounds keep drafting their whole length but for
  // the explorations.
  const std::vector<GenRequest> requests = ::seed::testing::varied_requests(6, 0.0f, 160);
  SlowDrafter* drafter = nullptr;
  auto fixed = engine(false, std::chrono::milliseconds(2), &drafter, 2);
  const std::vector<std::vector<int32_t>> tokens = tokens_of(fixed->generate(requests));
  for (WarmUps warm_ups : {WarmUps::kDrafts, WarmUps::kForwards}) {
    auto adaptive = engine(true, std::chrono::milliseconds(2), &drafter, 2, false, warm_ups);
    EXPECT_EQ(tokens_of(adaptive->generate(requests)), tokens);
    EXPECT_GT(2 * adaptive->stats().drafted_tokens, fixed->stats().drafted_tokens)
        << (warm_ups == WarmUps::kDrafts ? "drafts" : "forwards") << " warm up";
    // The engine's stats count the target's warm-ups: here every forward's.
    const PrefillStats& prefill = adaptive->stats().prefill;
    EXPECT_GT(prefill.verify_rounds, 0);
    EXPECT_EQ(prefill.graph_warm_ups, warm_ups == WarmUps::kForwards ? prefill.verify_rounds : 0);
  }
}

TEST_F(AdaptiveDraftEngineTest, DraftsThatPayResumeAfterTheRoundsExploredWithoutWithEveryVerdictInOrder) {
  const std::vector<GenRequest> requests = ::seed::testing::varied_requests(6, 0.0f, 160);
  const std::vector<std::vector<int32_t>> wholes = wholes_of(requests);
  // Free drafts on a launch-bound target: drafting pays several times over.
  OracleDrafter* drafter = nullptr;
  auto engine = oracle_engine(std::make_unique<OracleDrafter>(wholes), &drafter);
  const std::vector<Completion> out = engine->generate(requests);
  for (size_t i = 0; i < requests.size(); ++i) {
    EXPECT_EQ(out[i].tokens, generated_of(wholes[i], requests[i])) << "request " << i;
    const std::vector<int32_t> seen = drafter->log.seen(i);
    ASSERT_LE(seen.size(), wholes[i].size()) << "request " << i;
    const auto seen_end = wholes[i].begin() + static_cast<std::ptrdiff_t>(seen.size());
    EXPECT_EQ(seen, std::vector<int32_t>(wholes[i].begin(), seen_end)) << "request " << i;
  }
  // Plain batching is timed (two rounds without drafts) once drafting is
  // measured, and drafting then resumes, the skipped verdicts handed over.
  EXPECT_GT(drafter->log.proposals_after_skipped_rounds(), 0);
  // Every draft is accepted: most tokens come from drafts.
  const EngineStats stats = engine->stats();
  EXPECT_EQ(stats.accepted_tokens, stats.drafted_tokens);
  EXPECT_GT(2 * stats.accepted_tokens, stats.generated_tokens);
}

// Drafts of some cost in one batch, every token accepted for half of the
// requests and rejected for the others: the engine's alpha is their mix,
// at which drafting pays, and the requests whose drafts are rejected stop
// drafting (trying again now and then) while the others go on.
TEST_F(AdaptiveDraftEngineTest, RequestsWhoseDraftsAreRejectedStopDraftingWhileTheOthersGoOn) {
  std::vector<GenRequest> requests = ::seed::testing::varied_requests(6, 0.0f, 160);
  // As many rounds for each: a rejected draft's round gains one token.
  for (size_t i = 1; i < requests.size(); i += 2) requests[i].max_new_tokens = 40;
  const std::vector<std::vector<int32_t>> wholes = wholes_of(requests);
  OracleDrafter* drafter = nullptr;
  auto engine =
      oracle_engine(std::make_unique<OracleDrafter>(wholes, true, std::chrono::microseconds(2000)), &drafter);
  const std::vector<Completion> out = engine->generate(requests);
  for (size_t i = 0; i < requests.size(); ++i) {
    EXPECT_EQ(out[i].tokens, generated_of(wholes[i], requests[i])) << "request " << i;
    // A rejected request's 40 tokens take 40 rounds (at the engine's alpha
    // it would draft in 35 of them); an accepted one's 160 take 40 where it
    // drafts three tokens a round.
    if (i % 2 == 0) {
      EXPECT_GT(drafter->drafted_rounds(i), 10) << "request " << i;
    } else {
      EXPECT_LT(drafter->drafted_rounds(i), 24) << "request " << i;
    }
  }
}

// Drafts drawn from q: the tokens follow the draft's length, so it stays whole.
TEST_F(AdaptiveDraftEngineTest, SampledRequestsWithDrawnDraftsDraftTheirWholeLength) {
  const std::vector<GenRequest> requests = ::seed::testing::varied_requests(4, 1.0f, 40);
  SlowDrafter* drafter = nullptr;
  auto fixed = engine(false, std::chrono::milliseconds(1), &drafter, 16, true);
  auto adaptive = engine(true, std::chrono::milliseconds(1), &drafter, 16, true);
  EXPECT_EQ(tokens_of(adaptive->generate(requests)), tokens_of(fixed->generate(requests)));
  EXPECT_EQ(adaptive->stats().drafted_tokens, fixed->stats().drafted_tokens);
}

}  // namespace
}  // namespace seed::spec
