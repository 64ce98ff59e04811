// The engines' invariants (models/base/counter_rng.h), on tiny random models
// written to real model folders and loaded through make_engine:
//   - greedy: every engine produces exactly `ar`'s tokens;
//   - sampled: `seed` and `seed-batch` produce exactly serial `sd`'s (and,
//     with tree drafts, `mcsd`'s) tokens, whatever the drafter count or the
//     request order;
//   - lossless: the first two sampled tokens follow the target's exact
//     distribution (chi-square);
//   - the scheduler is FCFS, terminates with more requests than drafters,
//     and turns a drafter failure into that request's error only.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <filesystem>
#include <map>
#include <thread>
#include <tuple>

#include "models/causal_lm.h"
#include "spec/drafters/model/draft_model_drafter.h"
#include "spec/engine/engine_factory.h"
#include "spec/engine/model_target.h"
#include "spec/engine/scheduled_engine.h"
#include "tests/models/tiny_models.h"
#include "tests/spec/chi_square.h"
#include "tests/spec/engine_fixtures.h"
#include "tests/spec/shared_prefix_requests.h"
#include "tests/throws_error.h"

namespace seed::spec {
namespace {

namespace fs = std::filesystem;
using ::seed::testing::throws_error;

using ::seed::testing::ModelPair;
using ::seed::testing::tokens_of;

class EngineTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    pairs_ = new ::seed::testing::TestModelPairs("seed_engine_test");
    pair_ = &pairs_->pair;
    small_ = &pairs_->small;
  }
  static void TearDownTestSuite() { delete pairs_; }

  static std::unique_ptr<Engine> engine(const std::string& name, std::vector<int> k_config = {}, int drafters = 2,
                                        const ModelPair* pair = nullptr, bool prefix_cache = true,
                                        DraftTruncation cut = {}, const std::string& device = "cpu",
                                        LogitReads reads = LogitReads::kAuto, bool sample_drafts = false) {
    EngineOptions o;
    o.sample_drafts = sample_drafts;
    o.device = device;
    o.logit_reads = reads;
    o.draft_cut = cut;
    o.prefix_cache = prefix_cache;
    o.engine = EngineKind::parse(name);
    o.target = (pair ? pair : pair_)->target;
    o.draft = (pair ? pair : pair_)->draft;
    o.draft_length = 3;
    o.k_config = std::move(k_config);
    o.drafters = drafters;
    return make_engine(o);
  }

  // `seed` (kFcfs, one proposal per forward) or `seed-batch` (kBatch), built
  // by hand so that its schedule can be read: chains of three, `drafters`
  // draft-model drafters on as many threads.
  static std::unique_ptr<ScheduledEngine> scheduled_seed(SchedulePolicy policy, int drafters) {
    auto target = std::shared_ptr<models::CausalLM>(models::CausalLM::load(pair_->target));
    const std::shared_ptr<const models::CausalLM> draft = models::CausalLM::load(pair_->draft);
    RunSettings settings;
    settings.k_config = {1, 1, 1};
    std::vector<std::unique_ptr<Drafter>> handles;
    for (int i = 0; i < drafters; ++i) handles.push_back(make_draft_model_drafter(draft));
    const int max_batch = policy == SchedulePolicy::kFcfs ? 1 : 16;
    return ScheduledEngine::seed(policy == SchedulePolicy::kFcfs ? "seed" : "seed-batch",
                                 std::make_unique<ModelTarget>(target), std::move(handles), settings,
                                 Scheduler(policy, max_batch), drafters);
  }

  // Six requests with prompts of different lengths and their own streams.
  static std::vector<GenRequest> requests(float temperature, int64_t max_new = 20) {
    return ::seed::testing::varied_requests(6, temperature, max_new);
  }

  static ::seed::testing::TestModelPairs* pairs_;
  static ModelPair* pair_;
  static ModelPair* small_;
  // Sampled engines' first two tokens against the target's p (chi-square),
  // on `device`, reading the target's logits as `reads` says.
  static void expect_sampled_engines_lossless(const std::string& device, LogitReads reads = LogitReads::kAuto);
};

::seed::testing::TestModelPairs* EngineTest::pairs_ = nullptr;
ModelPair* EngineTest::pair_ = nullptr;
ModelPair* EngineTest::small_ = nullptr;

using ::seed::testing::shared_prefix_requests;

TEST_F(EngineTest, PrefixCacheChangesNoTokenAndComputesFewerPromptTokens) {
  for (const float temperature : {0.0f, 1.0f}) {
    for (const std::string name : {"ar", "ar-batch", "sd", "mcsd", "seed", "seed-batch"}) {
      auto off = engine(name, {}, 2, nullptr, /*prefix_cache=*/false);
      auto on = engine(name, {}, 2, nullptr, /*prefix_cache=*/true);
      const auto requests = shared_prefix_requests(temperature);
      EXPECT_EQ(tokens_of(on->generate(requests)), tokens_of(off->generate(requests)))
          << name << " at T = " << temperature;
      const PrefillStats without = off->stats().prefill, with = on->stats().prefill;
      EXPECT_EQ(without.prompt_tokens, 6 * 40 + 2 * (1 + 2 + 3)) << name;
      EXPECT_EQ(without.computed_tokens, without.prompt_tokens) << name;
      EXPECT_EQ(with.prompt_tokens, without.prompt_tokens) << name;
      // At least the 32 tokens of the stem's two whole blocks come from the
      // cache for every request but one.
      EXPECT_LE(with.computed_tokens, without.prompt_tokens - 5 * 32) << name;
    }
  }
}

// The first request to complete cancels the others: they complete with
// kCancelled, what completed is unchanged, and the target holds nothing
// afterwards.
TEST_F(EngineTest, CancelledRequestsStopAndFreeWhatTheyHeld) {
  for (const std::string name : {"ar", "ar-batch", "sd", "mcsd", "seed", "seed-batch"}) {
    auto e = engine(name);
    const auto reference = tokens_of(engine(name)->generate(requests(1.0f)));
    std::vector<size_t> order;
    const auto cancel_the_rest = [&](size_t index, const Completion&) {
      order.push_back(index);
      std::vector<size_t> rest;
      for (size_t i = 0; i < 6; ++i) {
        if (i != index) rest.push_back(i);
      }
      return rest;
    };
    const std::vector<Completion> out = e->generate(requests(1.0f), cancel_the_rest);
    ASSERT_EQ(order.size(), 1u) << name << ": cancelled requests are not reported";
    for (size_t i = 0; i < out.size(); ++i) {
      if (i == order[0]) {
        EXPECT_EQ(out[i].tokens, reference[i]) << name;
        EXPECT_NE(out[i].finish, FinishReason::kCancelled) << name;
      } else {
        EXPECT_EQ(out[i].finish, FinishReason::kCancelled) << name << " request " << i;
      }
    }
    EXPECT_EQ(e->stats().prefill.kv_live_bytes, 0) << name;
    EXPECT_EQ(tokens_of(e->generate(requests(1.0f))), reference) << name << ": the engine works on afterwards";
  }
}

TEST_F(EngineTest, GreedyEveryEngineProducesTheArTokens) {
  const auto reference = tokens_of(engine("ar")->generate(requests(0.0f)));
  for (const auto& c : reference) ASSERT_EQ(c.size(), 20u);
  struct Case { std::string name; std::vector<int> k_config; int drafters; };
  for (const Case& c : {Case{"ar-batch", {}, 1}, Case{"sd", {}, 1}, Case{"mcsd", {2, 2, 1}, 1},
                        Case{"seed", {}, 2}, Case{"seed", {2, 1, 1}, 3}, Case{"seed-batch", {}, 4}}) {
    auto e = engine(c.name, c.k_config, c.drafters);
    const std::vector<Completion> out = e->generate(requests(0.0f));
    EXPECT_EQ(tokens_of(out), reference) << c.name;
    const EngineStats s = e->stats();
    // A round adds its accepted tokens and one more; drafts never reach past
    // max_new_tokens, so no round's tokens are cut.
    const int64_t rounds = s.thought.target_forwards + s.evaluation.target_forwards;
    EXPECT_EQ(s.generated_tokens, 6 * 20) << c.name;
    EXPECT_EQ(s.generated_tokens, s.accepted_tokens + rounds) << c.name;
    if (c.name == "ar-batch") {
      EXPECT_EQ(s.tau(), 1.0);
      EXPECT_EQ(s.target_forwards, 20) << "one forward per token for the whole batch";
    } else {
      EXPECT_GT(s.alpha(), 0.0) << c.name << ": the draft should sometimes agree";
      EXPECT_LT(s.alpha(), 1.0) << c.name << ": and sometimes not";
      EXPECT_GT(s.tau(), 1.0) << c.name;
    }
  }
}

TEST_F(EngineTest, ARequestsDraftLengthSetsItsChainAndChangesNoGreedyToken) {
  const auto reference = tokens_of(engine("ar")->generate(requests(0.0f)));
  for (const std::string name : {"sd", "seed"}) {
    for (const int length : {1, 6}) {
      std::vector<GenRequest> batch = requests(0.0f);
      for (GenRequest& r : batch) r.draft_length = length;
      auto e = engine(name);  // its own draft length is 3
      EXPECT_EQ(tokens_of(e->generate(batch)), reference) << name << " " << length;
      const EngineStats s = e->stats();
      const int64_t rounds = s.thought.target_forwards + s.evaluation.target_forwards;
      // A round drafts `length` tokens but where the request's budget is nearly spent.
      EXPECT_LE(s.drafted_tokens, length * rounds) << name;
      if (length == 6) {
        EXPECT_GT(s.drafted_tokens, 3 * rounds) << name;
      }
    }
  }
}

// Top-token drafts keep the target's own draws (the verifier's matching
// rule): every engine, drafter count, draft shape and draft length gives
// sampling's tokens.
TEST_F(EngineTest, SampledEveryEngineProducesTheArTokens) {
  const auto reference = tokens_of(engine("ar")->generate(requests(1.0f)));
  struct Case { std::string name; std::vector<int> k_config; int drafters; };
  for (const Case& c : {Case{"ar-batch", {}, 1}, Case{"sd", {}, 1}, Case{"mcsd", {2, 2, 1}, 1}, Case{"seed", {}, 1},
                        Case{"seed", {}, 5}, Case{"seed", {2, 2, 1}, 2}, Case{"seed-batch", {}, 2},
                        Case{"seed-batch", {}, 5}}) {
    EXPECT_EQ(tokens_of(engine(c.name, c.k_config, c.drafters)->generate(requests(1.0f))), reference)
        << c.name << " " << c.drafters;
  }
  // Chains whose length the requests set: every round drafts.
  for (const int length : {1, 6}) {
    std::vector<GenRequest> batch = requests(1.0f);
    for (GenRequest& r : batch) r.draft_length = length;
    auto e = engine("seed-batch");
    EXPECT_EQ(tokens_of(e->generate(batch)), reference) << "draft length " << length;
    EXPECT_GT(e->stats().tau(), 1.0) << "draft length " << length;
  }
  // Request order does not matter either: each request owns its stream.
  std::vector<GenRequest> reversed = requests(1.0f);
  std::reverse(reversed.begin(), reversed.end());
  auto out = tokens_of(engine("seed-batch", {}, 3)->generate(reversed));
  std::reverse(out.begin(), out.end());
  EXPECT_EQ(out, reference);
}

// Drafts drawn from q are tested by rejection sampling, whose tokens follow
// the draft: engines drafting the same shape agree with each other, not
// with sampling alone.
TEST_F(EngineTest, SampledDraftsGiveTheTokensOfTheirShapeInEveryEngine) {
  const auto drawn = [](const std::string& name, std::vector<int> k_config, int drafters) {
    return engine(name, std::move(k_config), drafters, nullptr, true, {}, "cpu", LogitReads::kAuto, true);
  };
  const auto ar = tokens_of(engine("ar")->generate(requests(1.0f)));
  const auto sd = tokens_of(drawn("sd", {}, 1)->generate(requests(1.0f)));
  const auto mcsd = tokens_of(drawn("mcsd", {2, 2, 1}, 1)->generate(requests(1.0f)));
  EXPECT_NE(sd, ar);  // different randomness, equally valid samples
  EXPECT_NE(sd, mcsd);
  for (int drafters : {1, 2, 5}) {
    EXPECT_EQ(tokens_of(drawn("seed", {}, drafters)->generate(requests(1.0f))), sd) << drafters;
    EXPECT_EQ(tokens_of(drawn("seed-batch", {}, drafters)->generate(requests(1.0f))), sd) << drafters;
    EXPECT_EQ(tokens_of(drawn("seed", {2, 2, 1}, drafters)->generate(requests(1.0f))), mcsd) << drafters;
  }
}

// On a GPU each drafter queues its kernels on a CUDA stream of its own, beside
// the target's: what the engines compute must not change. seed verifies one
// sequence at a time as sd does, so the two run the same kernels on the same
// shapes and must agree token for token, greedy and sampled.
TEST_F(EngineTest, OnCudaDraftersOnTheirOwnStreamsChangeNoToken) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  const auto on_cuda = [](const std::string& name, int drafters) {
    EngineOptions o;
    o.engine = EngineKind::parse(name);
    o.target = pair_->target;
    o.draft = pair_->draft;
    o.draft_length = 3;
    o.drafters = drafters;
    o.device = "cuda:0";
    return make_engine(o);
  };
  for (const float temperature : {0.0f, 1.0f}) {
    const auto sd = tokens_of(on_cuda("sd", 1)->generate(requests(temperature)));
    for (const int drafters : {1, 3}) {
      EXPECT_EQ(tokens_of(on_cuda("seed", drafters)->generate(requests(temperature))), sd)
          << "T = " << temperature << ", " << drafters << " drafters";
    }
  }
}

// The first two tokens over many streams against p(x1) p(x2 | x1), computed
// from the target's logits directly; the draft's top tokens, and drafts
// drawn from its whole q and from a q' cut to its top 3 tokens or its 0.7
// nucleus (of 8).
void EngineTest::expect_sampled_engines_lossless(const std::string& device, LogitReads reads) {
  constexpr int64_t kVocab = 8;
  constexpr int kTrials = 5000;
  const std::vector<int32_t> prompt = {1, 5, 2};
  SamplingParams sampling;
  sampling.temperature = 0.9f;
  auto target = models::CausalLM::load(small_->target);
  std::vector<double> expected(kVocab * kVocab);
  {
    torch::NoGradGuard no_grad;
    const at::Tensor first = torch::softmax(
        target->forward_full(torch::tensor(std::vector<int64_t>(prompt.begin(), prompt.end())).unsqueeze(0))[0][-1] /
            sampling.temperature, -1);
    for (int64_t x = 0; x < kVocab; ++x) {
      std::vector<int64_t> seq(prompt.begin(), prompt.end());
      seq.push_back(x);
      const at::Tensor second =
          torch::softmax(target->forward_full(torch::tensor(seq).unsqueeze(0))[0][-1] / sampling.temperature, -1);
      for (int64_t y = 0; y < kVocab; ++y) {
        expected[x * kVocab + y] = first[x].item<double>() * second[y].item<double>();
      }
    }
  }
  std::vector<GenRequest> batch(kTrials);
  for (int i = 0; i < kTrials; ++i) {
    batch[i].prompt_tokens = prompt;
    batch[i].max_new_tokens = 2;
    batch[i].sampling = sampling;
    batch[i].seed = 9;
    batch[i].stream = static_cast<uint64_t>(i);
  }
  // Top-token drafts (matching), then drafts drawn from q (rejection sampling).
  struct Case { std::string name; std::vector<int> k_config; DraftTruncation cut; bool drawn; };
  const DraftTruncation top3{3, 1.0f}, nucleus{0, 0.7f};
  for (const Case& c : {Case{"ar", {}, {}, false}, Case{"sd", {}, {}, false}, Case{"mcsd", {3, 2}, {}, false},
                        Case{"seed-batch", {}, {}, false}, Case{"sd", {}, {}, true}, Case{"mcsd", {3, 2}, {}, true},
                        Case{"seed", {2, 2}, {}, true}, Case{"sd", {}, top3, true}, Case{"mcsd", {3, 2}, top3, true},
                        Case{"seed", {2, 2}, nucleus, true}, Case{"seed-batch", {}, nucleus, true}}) {
    auto e = engine(c.name, c.k_config, 2, small_, true, c.cut, device, reads, c.drawn);
    std::vector<int64_t> counts(kVocab * kVocab, 0);
    for (const Completion& out : e->generate(batch)) {
      ASSERT_EQ(out.tokens.size(), 2u);
      ++counts[out.tokens[0] * kVocab + out.tokens[1]];
    }
    const auto fit = ::seed::testing::chi_square(counts, expected, kTrials);
    std::printf("%s, %s, q' top-%d top-p %.1f: chi-square %.4g (%d dof), p = %.4g, alpha %.3f\n", c.name.c_str(),
                c.drawn ? "drawn drafts" : "top-token drafts", c.cut.top_k, c.cut.top_p, fit.statistic, fit.dof,
                fit.p_value, e->stats().alpha());
    EXPECT_GT(fit.p_value, 0.001) << device << " " << c.name << (c.drawn ? " drawn" : " top-token") << " top-"
                                  << c.cut.top_k << " top-p " << c.cut.top_p;
  }
}

TEST_F(EngineTest, SampledEnginesAreLossless) { expect_sampled_engines_lossless("cpu"); }

// A GPU verifies, and drafts from a draft model, from a summary of each row
// computed where the logits are (logit_summary.h); the same path on the CPU.
TEST_F(EngineTest, SampledEnginesAreLosslessFromSummarisedLogits) {
  expect_sampled_engines_lossless("cpu", LogitReads::kDeviceSummary);
}

// From summarised logits greedy engines give ar's tokens, and sampled ones
// the tokens they give from the host rows: p at a drafted token differs
// only by the order its mass was summed in.
TEST_F(EngineTest, SummarisedLogitsGiveTheHostRowsTokens) {
  const auto ar = tokens_of(engine("ar")->generate(requests(0.0f)));
  struct Case { std::string name; std::vector<int> k_config; };
  for (const float temperature : {0.0f, 1.0f}) {
    for (const Case& c : {Case{"ar", {}}, Case{"sd", {}}, Case{"mcsd", {2, 2, 1}}, Case{"seed-batch", {}}}) {
      const auto host = tokens_of(engine(c.name, c.k_config)->generate(requests(temperature)));
      const auto summarised = tokens_of(engine(c.name, c.k_config, 2, nullptr, true, {}, "cpu",
                                               LogitReads::kDeviceSummary)->generate(requests(temperature)));
      EXPECT_EQ(summarised, host) << c.name << " T " << temperature;
      if (temperature == 0.0f) {
        EXPECT_EQ(summarised, ar) << c.name;
      }
    }
  }
}

// The same on a GPU: its forwards replay CUDA graphs.
TEST_F(EngineTest, OnCudaSampledEnginesAreLossless) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  expect_sampled_engines_lossless("cuda:0");
}

TEST_F(EngineTest, FcfsVerifiesProposalsInArrivalOrderAndFinishesMoreRequestsThanDrafters) {
  auto e = scheduled_seed(SchedulePolicy::kFcfs, 2);
  const std::vector<Completion> out = e->generate(requests(1.0f));
  for (const Completion& c : out) {
    EXPECT_EQ(c.finish, FinishReason::kLength);
    EXPECT_EQ(c.tokens.size(), 20u);
  }
  const std::vector<ScheduleEvent> schedule = e->schedule();
  std::vector<uint64_t> proposed, verified;
  int last_batch = -1;
  for (const ScheduleEvent& event : schedule) {
    if (event.kind == ScheduleEvent::kProposed) {
      proposed.push_back(event.slot);
    } else {
      verified.push_back(event.slot);
      EXPECT_EQ(event.worker, last_batch + 1) << "FCFS verifies one proposal per forward";
      last_batch = event.worker;
    }
  }
  EXPECT_EQ(verified, proposed);
  EXPECT_EQ(static_cast<int64_t>(verified.size()), e->stats().target_forwards);
}

TEST_F(EngineTest, BatchedSeedVerifiesEveryReadyProposalOnceInArrivalOrder) {
  auto e = scheduled_seed(SchedulePolicy::kBatch, 3);
  e->generate(requests(1.0f));
  std::vector<uint64_t> proposed, verified;
  std::map<int, int> batch_sizes;
  for (const ScheduleEvent& event : e->schedule()) {
    (event.kind == ScheduleEvent::kProposed ? proposed : verified).push_back(event.slot);
    if (event.kind == ScheduleEvent::kVerified) ++batch_sizes[event.worker];
  }
  EXPECT_EQ(verified, proposed);
  EXPECT_EQ(static_cast<int64_t>(batch_sizes.size()), e->stats().target_forwards);
}

// ar-batch under the priority policy: each forward takes the most urgent
// ready requests (two at most), and the tokens are those of any schedule.
TEST_F(EngineTest, PriorityScheduleVerifiesTheMostUrgentRequestsFirst) {
  auto target = std::shared_ptr<models::CausalLM>(models::CausalLM::load(pair_->target));
  auto e = ScheduledEngine::lockstep(std::make_unique<ModelTarget>(target), RunSettings{},
                                     Scheduler(SchedulePolicy::kPriority, 2));
  std::vector<GenRequest> batch = requests(0.0f, 4);
  for (size_t i = 0; i < batch.size(); ++i) batch[i].priority = i >= 4 ? 1.0 : 0.0;
  const std::vector<Completion> out = e->generate(batch);
  EXPECT_EQ(tokens_of(out), tokens_of(engine("ar")->generate(batch)));
  for (const Completion& c : out) EXPECT_EQ(c.finish, FinishReason::kLength);
  std::map<int, std::vector<uint64_t>> forwards;
  for (const ScheduleEvent& event : e->schedule()) {
    if (event.kind == ScheduleEvent::kVerified) forwards[event.worker].push_back(event.slot);
  }
  ASSERT_EQ(forwards.size(), 12u) << "six requests of four tokens, two per forward";
  for (int f = 0; f < 4; ++f) EXPECT_EQ(forwards[f], std::vector<uint64_t>({4, 5})) << "forward " << f;
}

// Fails the given slot's third proposal, like a drafter that loses its model.
class FailingDrafter : public Drafter {
 public:
  FailingDrafter(std::shared_ptr<const models::CausalLM> model, uint64_t failing_slot)
      : inner_(make_draft_model_drafter(std::move(model))), failing_slot_(failing_slot) {}
  void start(uint64_t slot, const std::vector<int32_t>& tokens, const DraftSettings& settings) override {
    inner_->start(slot, tokens, settings);
  }
  DraftTree propose(uint64_t slot, int max_depth) override {
    if (slot == failing_slot_ && ++proposals_ == 3) SEED_FAIL(kIo) << "draft weights vanished";
    return inner_->propose(slot, max_depth);
  }
  void advance(uint64_t slot, const Verdict& verdict) override { inner_->advance(slot, verdict); }
  void finish(uint64_t slot) override { inner_->finish(slot); }

 private:
  std::unique_ptr<Drafter> inner_;
  uint64_t failing_slot_;
  int proposals_ = 0;
};

TEST_F(EngineTest, ADrafterFailureEndsOnlyItsRequest) {
  const auto sd = tokens_of(engine("sd")->generate(requests(1.0f)));
  auto target = std::shared_ptr<models::CausalLM>(models::CausalLM::load(pair_->target));
  const std::shared_ptr<const models::CausalLM> draft = models::CausalLM::load(pair_->draft);
  RunSettings settings;
  settings.k_config = {1, 1, 1};
  std::vector<std::unique_ptr<Drafter>> drafters;
  drafters.push_back(make_draft_model_drafter(draft));
  drafters.push_back(std::make_unique<FailingDrafter>(draft, 3));
  auto seed = ScheduledEngine::seed("seed", std::make_unique<ModelTarget>(target), std::move(drafters), settings,
                                    Scheduler(SchedulePolicy::kFcfs, 1), 1);
  auto serial = ScheduledEngine::serial("sd", std::make_unique<ModelTarget>(target),
                                        std::make_unique<FailingDrafter>(draft, 3), settings);
  for (Engine* e : std::vector<Engine*>{seed.get(), serial.get()}) {
    const std::vector<Completion> out = e->generate(requests(1.0f));
    for (size_t i = 0; i < out.size(); ++i) {
      if (i == 3) {
        EXPECT_EQ(out[i].finish, FinishReason::kError) << e->name();
        EXPECT_NE(out[i].error.find("draft weights vanished"), std::string::npos) << out[i].error;
      } else {
        EXPECT_EQ(out[i].tokens, sd[i]) << e->name() << " request " << i;
      }
    }
  }
  // The engine stays usable after a failed request.
  EXPECT_EQ(tokens_of(seed->generate(requests(1.0f)))[0], sd[0]);
}

// A drafter whose host goes away after `proposals` proposals: every later
// call fails with kUnavailable, as a remote drafter on a dead rank does.
class VanishingDrafter : public Drafter {
 public:
  VanishingDrafter(std::shared_ptr<const models::CausalLM> model, int proposals)
      : inner_(make_draft_model_drafter(std::move(model))), left_(proposals) {}
  void start(uint64_t slot, const std::vector<int32_t>& tokens, const DraftSettings& settings) override {
    check();
    inner_->start(slot, tokens, settings);
  }
  DraftTree propose(uint64_t slot, int max_depth) override {
    check();
    --left_;
    return inner_->propose(slot, max_depth);
  }
  void advance(uint64_t slot, const Verdict& verdict) override {
    check();
    inner_->advance(slot, verdict);
  }
  void finish(uint64_t slot) override { inner_->finish(slot); }

 private:
  void check() const {
    if (left_ <= 0) SEED_FAIL(kUnavailable) << "draft rank 2 stopped answering";
  }
  std::unique_ptr<Drafter> inner_;
  int left_;
};

TEST_F(EngineTest, SequencesOfAVanishedDrafterMoveOnWithTheSameTokens) {
  auto target = std::shared_ptr<models::CausalLM>(models::CausalLM::load(pair_->target));
  const std::shared_ptr<const models::CausalLM> draft = models::CausalLM::load(pair_->draft);
  RunSettings settings;
  settings.k_config = {1, 1, 1};
  for (float temperature : {0.0f, 1.0f}) {
    const auto sd = tokens_of(engine("sd")->generate(requests(temperature)));
    std::vector<std::unique_ptr<Drafter>> drafters;
    drafters.push_back(make_draft_model_drafter(draft));
    drafters.push_back(std::make_unique<VanishingDrafter>(draft, 4));
    drafters.push_back(make_draft_model_drafter(draft));
    auto seed = ScheduledEngine::seed("seed", std::make_unique<ModelTarget>(target), std::move(drafters), settings,
                                      Scheduler(SchedulePolicy::kFcfs, 1), 1);
    EXPECT_EQ(tokens_of(seed->generate(requests(temperature))), sd) << temperature;
    EXPECT_EQ(seed->stats().drafter_faults, 2) << "the vanished drafter hosted requests 1 and 4";
    // The next call runs on the live drafters only.
    EXPECT_EQ(tokens_of(seed->generate(requests(temperature))), sd) << temperature;
    EXPECT_EQ(seed->stats().drafter_faults, 2);
  }
}

TEST_F(EngineTest, WithEveryDrafterGoneTheTargetDecodesAlone) {
  auto target = std::shared_ptr<models::CausalLM>(models::CausalLM::load(pair_->target));
  const std::shared_ptr<const models::CausalLM> draft = models::CausalLM::load(pair_->draft);
  RunSettings settings;
  settings.k_config = {1, 1, 1};
  std::vector<std::unique_ptr<Drafter>> drafters;
  drafters.push_back(std::make_unique<VanishingDrafter>(draft, 3));
  auto seed = ScheduledEngine::seed("seed", std::make_unique<ModelTarget>(target), std::move(drafters), settings,
                                    Scheduler(SchedulePolicy::kFcfs, 1), 1);
  const std::vector<Completion> out = seed->generate(requests(0.0f));
  EXPECT_EQ(tokens_of(out), tokens_of(engine("ar")->generate(requests(0.0f))));
  for (const Completion& c : out) EXPECT_EQ(c.finish, FinishReason::kLength);
}

// Prefill ahead of the first verify (what the SEED engines do while their
// drafters draft the first proposals) changes no verdict, and prompts of
// one prefill share their common blocks as one verify's would.
TEST_F(EngineTest, APrefilledSlotGetsTheVerdictsOfAFreshOne) {
  const auto model = std::shared_ptr<models::CausalLM>(models::CausalLM::load(pair_->target));
  const std::vector<GenRequest> batch = shared_prefix_requests(1.0f);
  DraftTree draft;
  draft.deterministic = true;  // a point-mass q: sampled verdicts still follow p
  for (int i = 0; i < 3; ++i) {
    draft.tokens.push_back(3 * i + 1);
    draft.parents.push_back(i - 1);
  }
  const auto verdicts = [&](bool prefill) {
    ModelTarget target(model);
    std::vector<uint64_t> slots;
    std::vector<VerifyItem> items;
    for (size_t i = 0; i < batch.size(); ++i) {
      TargetSettings settings;
      settings.sampling = batch[i].sampling;
      settings.seed = batch[i].seed;
      settings.stream = batch[i].stream;
      target.start(i, batch[i].prompt_tokens, settings);
      slots.push_back(i);
      items.push_back({i, &draft});
    }
    int64_t computed_by_prefill = 0;
    if (prefill) {
      target.prefill(slots);
      computed_by_prefill = target.prefill_stats().computed_tokens;
    }
    std::vector<std::vector<int32_t>> tokens;
    for (int round = 0; round < 2; ++round) {
      for (const Verdict& v : target.verify(items)) tokens.push_back(v.tokens);
    }
    return std::make_tuple(tokens, target.prefill_stats().computed_tokens, computed_by_prefill);
  };
  const auto [fresh, fresh_computed, none] = verdicts(false);
  const auto [prefilled, prefilled_computed, by_prefill] = verdicts(true);
  EXPECT_EQ(prefilled, fresh);
  EXPECT_EQ(prefilled_computed, fresh_computed);
  EXPECT_EQ(by_prefill + static_cast<int64_t>(batch.size()), fresh_computed) << "all but each prompt's last token";
  EXPECT_LT(prefilled_computed, ::seed::testing::prompt_tokens_of(batch)) << "the stem is computed once";
}

// Drafters hold the draft model itself, not copies of its (packed)
// weights, and draft on it from several threads at once exactly as one
// drafter alone does.
TEST_F(EngineTest, DraftersShareOneDraftModelAcrossThreads) {
  const std::shared_ptr<const models::CausalLM> draft = models::CausalLM::load(pair_->draft);
  DraftSettings settings;
  settings.k_config = {2, 1, 1};
  settings.seed = 5;
  const std::vector<GenRequest> batch = requests(1.0f);
  const auto drafts_of = [&](Drafter& drafter, size_t first, size_t step) {
    std::vector<std::vector<int32_t>> out(batch.size());
    for (size_t i = first; i < batch.size(); i += step) {
      DraftSettings own = settings;  // each thread its own copy
      own.stream = i;
      drafter.start(i, batch[i].prompt_tokens, own);
      out[i] = drafter.propose(i, 3).tokens;
    }
    return out;
  };
  const std::unique_ptr<Drafter> alone = make_draft_model_drafter(draft);
  const auto expected = drafts_of(*alone, 0, 1);

  std::vector<std::unique_ptr<Drafter>> drafters;
  for (int t = 0; t < 3; ++t) drafters.push_back(make_draft_model_drafter(draft));
  EXPECT_EQ(draft.use_count(), 5) << "the test, `alone` and three drafters hold one model";
  std::vector<std::vector<std::vector<int32_t>>> got(drafters.size());
  std::vector<std::thread> threads;
  for (size_t t = 0; t < drafters.size(); ++t) {
    threads.emplace_back([&, t] { got[t] = drafts_of(*drafters[t], t, drafters.size()); });
  }
  for (std::thread& thread : threads) thread.join();
  for (size_t i = 0; i < batch.size(); ++i) {
    EXPECT_FALSE(expected[i].empty());
    EXPECT_EQ(got[i % drafters.size()][i], expected[i]) << "request " << i;
  }
}

TEST_F(EngineTest, AFullContextEndsTheRequestAtTheSameTokenInEveryEngine) {
  // Context 96, prompt 90: positions 90..95 can be fed, and one more token is
  // sampled after the last of them: 7 tokens.
  std::vector<GenRequest> batch = requests(0.0f, 50);
  batch[2].prompt_tokens.assign(90, 4);
  batch[4].prompt_tokens.assign(97, 4);  // longer than the context
  const std::vector<Completion> reference = engine("ar")->generate(batch);
  EXPECT_EQ(reference[2].finish, FinishReason::kContext);
  EXPECT_EQ(reference[2].tokens.size(), 7u);
  EXPECT_EQ(reference[4].finish, FinishReason::kError);
  EXPECT_NE(reference[4].error.find("request 4: prompt of 97 tokens"), std::string::npos) << reference[4].error;
  EXPECT_EQ(reference[0].finish, FinishReason::kLength);
  for (const std::string name : {"ar-batch", "sd", "mcsd", "seed", "seed-batch"}) {
    const std::vector<Completion> out = engine(name)->generate(batch);
    EXPECT_EQ(tokens_of(out), tokens_of(reference)) << name;
    EXPECT_EQ(out[2].finish, FinishReason::kContext) << name;
    EXPECT_EQ(out[4].finish, FinishReason::kError) << name;
  }
}

TEST_F(EngineTest, MalformedRequestsAreErrorsNamingTheRequestAndField) {
  auto e = engine("seed");
  std::vector<GenRequest> batch = requests(1.0f);
  batch[1].max_new_tokens = -1;
  EXPECT_TRUE(throws_error([&] { e->generate(batch); }, ErrorKind::kInvalidArgument, {"request 1", "max_new_tokens"}));
  batch = requests(1.0f);
  batch[2].prompt_tokens = {3, 64};
  EXPECT_TRUE(throws_error([&] { e->generate(batch); }, ErrorKind::kInvalidArgument, {"request 2", "vocabulary"}));
  batch = requests(1.0f);
  batch[0].prompt_tokens.clear();
  batch[0].prompt = "4 9 10 13";
  EXPECT_TRUE(throws_error([&] { e->generate(batch); }, ErrorKind::kInvalidArgument, {"request 0", "tokenizer"}));
  batch = requests(1.0f);
  batch[3].draft_length = -1;
  EXPECT_TRUE(throws_error([&] { e->generate(batch); }, ErrorKind::kInvalidArgument, {"request 3", "draft_length"}));
  batch[3].draft_length = kMaxDraftLength + 1;
  EXPECT_TRUE(throws_error([&] { e->generate(batch); }, ErrorKind::kInvalidArgument, {"request 3", "draft_length"}));
  batch = requests(1.0f);
  batch[5].sampling.top_p = 1.5f;
  EXPECT_TRUE(throws_error([&] { e->generate(batch); }, ErrorKind::kInvalidArgument, {"request 5", "top_p"}));
  // Nothing was lost: the engine still serves a good batch.
  EXPECT_EQ(e->generate(requests(1.0f)).size(), 6u);
}

TEST_F(EngineTest, FactoryErrorsNameTheOption) {
  EngineOptions o;
  o.target = pair_->target;
  o.engine = EngineKind::kSeed;
  EXPECT_TRUE(throws_error([&] { make_engine(o); }, ErrorKind::kInvalidArgument, {"--draft"}));
  o.draft = small_->draft;
  EXPECT_TRUE(throws_error([&] { make_engine(o); }, ErrorKind::kInvalidArgument, {"--draft", "vocabulary"}));
  o.draft = pair_->draft;
  o.k_config = {2, 0};
  EXPECT_TRUE(throws_error([&] { make_engine(o); }, ErrorKind::kInvalidArgument, {"--k-config"}));
}

}  // namespace
}  // namespace seed::spec
