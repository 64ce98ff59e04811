// Pruned candidate trees (--tree pct) in every speculative engine, on tiny
// random models loaded through make_engine: greedy output equals ar's,
// sampled output follows the target's distribution (chi-square) and is the
// same in the scheduled engines as in serial sd; the drafts respect the
// rule; bad options are errors naming them.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "models/causal_lm.h"
#include "spec/drafters/model/draft_model_drafter.h"
#include "spec/engine/engine_factory.h"
#include "spec/engine/model_target.h"
#include "spec/engine/scheduled_engine.h"
#include "spec/engine/step_cost.h"
#include "tests/spec/chi_square.h"
#include "tests/spec/engine_fixtures.h"
#include "tests/spec/forwarding.h"
#include "tests/spec/sampled_trials.h"
#include "tests/throws_error.h"

namespace seed::spec {
namespace {

namespace fs = std::filesystem;
using ::seed::testing::ModelPair;
using ::seed::testing::tokens_of;
using ::seed::testing::throws_error;

class PrunedTreeEngineTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    pairs_ = new ::seed::testing::TestModelPairs("seed_pct_test");
    pair_ = &pairs_->pair;
    small_ = &pairs_->small;
  }
  static void TearDownTestSuite() { delete pairs_; }

  // threshold 0: measured by the factory.
  static std::unique_ptr<Engine> engine(const std::string& name, float threshold, const ModelPair* pair = pair_,
                                        std::string tree = kPrunedTree) {
    EngineOptions o;
    o.engine = EngineKind::parse(name);
    o.target = pair->target;
    o.draft = pair->draft;
    o.draft_length = 3;
    o.tree = std::move(tree);
    o.pct_threshold = threshold;
    o.drafters = 2;
    return make_engine(o);
  }

  static std::vector<GenRequest> requests(float temperature) {
    return ::seed::testing::varied_requests(6, temperature, 24);
  }

  static ::seed::testing::TestModelPairs* pairs_;
  static ModelPair* pair_;
  static ModelPair* small_;
};

::seed::testing::TestModelPairs* PrunedTreeEngineTest::pairs_ = nullptr;
ModelPair* PrunedTreeEngineTest::pair_ = nullptr;
ModelPair* PrunedTreeEngineTest::small_ = nullptr;

TEST_F(PrunedTreeEngineTest, GreedyEveryEngineProducesTheArTokens) {
  const auto reference = tokens_of(engine("ar", 0, pair_, "")->generate(requests(0.0f)));
  for (const float threshold : {0.0f, 0.02f, 0.3f}) {
    for (const std::string name : {"sd", "mcsd", "seed", "seed-batch"}) {
      auto e = engine(name, threshold);
      EXPECT_EQ(tokens_of(e->generate(requests(0.0f))), reference) << name << " threshold " << threshold;
      const EngineStats s = e->stats();
      if (threshold > 0) {  // measured, drafting may not pay on these equal-sized models
        EXPECT_GT(s.alpha(), 0.0) << name;
        EXPECT_GT(s.tau(), 1.0) << name;
      }
      const DraftPlan plan = e->draft_plan();
      if (threshold > 0) {
        EXPECT_EQ(plan.pct_expand, threshold);
        EXPECT_EQ(plan.pct_prune, 0.01f) << "epsilon as given";
      }
      EXPECT_GE(plan.pct_prune, 0.01f);
      EXPECT_GT(plan.pct_expand, 0.0f) << "measured when not given";
      EXPECT_EQ(plan.k_config, std::vector<int>(10, 5)) << "the top 5 to depth 10 by default";
    }
  }
}

TEST_F(PrunedTreeEngineTest, SampledSeedEnginesProduceSerialSdTokens) {
  const auto sd = tokens_of(engine("sd", 0.05f)->generate(requests(1.0f)));
  EXPECT_EQ(tokens_of(engine("mcsd", 0.05f)->generate(requests(1.0f))), sd);
  EXPECT_EQ(tokens_of(engine("seed", 0.05f)->generate(requests(1.0f))), sd);
  EXPECT_EQ(tokens_of(engine("seed-batch", 0.05f)->generate(requests(1.0f))), sd);
}

// The first two sampled tokens over many streams against p(x1) p(x2 | x1).
TEST_F(PrunedTreeEngineTest, SampledEnginesAreLossless) {
  constexpr int64_t kVocab = 8;
  constexpr int kTrials = 5000;
  const std::vector<int32_t> prompt = {1, 5, 2};
  SamplingParams sampling;
  sampling.temperature = 0.9f;
  auto target = models::CausalLM::load(small_->target);
  const std::vector<double> expected = ::seed::testing::two_token_law(*target, prompt, sampling.temperature, kVocab);
  const std::vector<GenRequest> batch = ::seed::testing::sampled_trials(prompt, sampling, kTrials, 2);
  for (const std::string name : {"sd", "seed"}) {
    auto e = engine(name, 0.02f, small_);
    std::vector<int64_t> counts(kVocab * kVocab, 0);
    for (const Completion& out : e->generate(batch)) {
      ASSERT_EQ(out.tokens.size(), 2u);
      ++counts[out.tokens[0] * kVocab + out.tokens[1]];
    }
    const auto fit = ::seed::testing::chi_square(counts, expected, kTrials);
    std::printf("%s pct: chi-square %.4g (%d dof), p = %.4g, alpha %.3f\n", name.c_str(), fit.statistic, fit.dof,
                fit.p_value, e->stats().alpha());
    EXPECT_GT(fit.p_value, 0.001) << name;
    EXPECT_GT(e->stats().alpha(), 0.0) << name;
  }
}

// The drafter's trees: every node at or above epsilon, every expanded node
// (one with children) at or above the threshold, no more expanded nodes per
// level than 1 / threshold, siblings in falling draft probability.
TEST_F(PrunedTreeEngineTest, DraftsFollowTheRule) {
  const PrunedTree rule{0.1f, 0.02f};
  std::shared_ptr<models::CausalLM> draft = models::CausalLM::load(pair_->draft);
  const std::unique_ptr<Drafter> drafter = make_draft_model_drafter(draft);
  for (const float temperature : {0.0f, 0.7f}) {
    DraftSettings settings;
    settings.sampling.temperature = temperature;
    settings.k_config = std::vector<int>(6, 4);
    settings.pruned = rule;
    const std::vector<int32_t> prompt = {3, 9, 14, 2};
    drafter->start(1, prompt, settings);
    const DraftTree tree = drafter->propose(1, 6);
    ASSERT_FALSE(tree.tokens.empty());
    EXPECT_TRUE(tree.deterministic);
    // Confidence of each node, recomputed from the draft model.
    torch::NoGradGuard no_grad;
    const SamplingParams q_params = temperature > 0 ? settings.sampling : SamplingParams{};
    std::vector<double> confidence(tree.tokens.size());
    std::vector<int> depth(tree.tokens.size()), children(tree.tokens.size() + 1, 0);
    for (size_t i = 0; i < tree.tokens.size(); ++i) {
      std::vector<int64_t> path;
      for (int32_t n = tree.parents[i]; n >= 0; n = tree.parents[static_cast<size_t>(n)]) {
        path.insert(path.begin(), tree.tokens[static_cast<size_t>(n)]);
      }
      std::vector<int64_t> seq(prompt.begin(), prompt.end());
      seq.insert(seq.end(), path.begin(), path.end());
      const at::Tensor logits = draft->forward_full(torch::tensor(seq).unsqueeze(0))[0][-1].contiguous();
      std::vector<float> q(static_cast<size_t>(logits.size(0)));
      sampling_distribution(logits.data_ptr<float>(), logits.size(0), q_params, q.data());
      const double parent = tree.parents[i] < 0 ? 1.0 : confidence[static_cast<size_t>(tree.parents[i])];
      confidence[i] = parent * q[static_cast<size_t>(tree.tokens[i])];
      depth[i] = tree.parents[i] < 0 ? 1 : depth[static_cast<size_t>(tree.parents[i])] + 1;
      ++children[static_cast<size_t>(tree.parents[i] + 1)];
      EXPECT_GE(confidence[i], rule.prune - 1e-5) << "node " << i;
      if (i > 0 && tree.parents[i] == tree.parents[i - 1]) {
        EXPECT_LE(confidence[i], confidence[i - 1] + 1e-5) << "siblings by falling probability";
      }
    }
    std::vector<int> expanded_per_depth(8, 0);
    for (size_t i = 0; i < tree.tokens.size(); ++i) {
      if (children[i + 1] == 0) continue;
      EXPECT_GE(confidence[i], rule.expand - 1e-5) << "node " << i << " has children";
      ++expanded_per_depth[static_cast<size_t>(depth[i])];
    }
    for (const int expanded : expanded_per_depth) EXPECT_LE(expanded, 10);
    drafter->finish(1);
  }
}

TEST_F(PrunedTreeEngineTest, StepCostIsMeasuredOnTheHandles) {
  auto target = std::make_unique<ModelTarget>(models::CausalLM::load(pair_->target), models::KvCacheOptions{});
  const std::unique_ptr<Drafter> drafter = make_draft_model_drafter(models::CausalLM::load(pair_->draft));
  const StepCost cost = measure_step_cost(*target, *drafter);
  EXPECT_GT(cost.draft_s, 0.0);
  EXPECT_GT(cost.target_s, 0.0);
  // The slots it used are gone: starting them again is a fresh start.
  EXPECT_NO_THROW(measure_step_cost(*target, *drafter));
}

// A drafter whose every proposal first waits `latency`, as a draft rank's
// answer does: a cost per proposal, whatever its depth.
class DelayedDrafter final : public ::seed::testing::ForwardingDrafter {
 public:
  DelayedDrafter(Drafter& inner, std::chrono::milliseconds latency) : ForwardingDrafter(inner), latency_(latency) {}
  DraftTree propose(uint64_t slot, int max_depth) override {
    std::this_thread::sleep_for(latency_);
    return ForwardingDrafter::propose(slot, max_depth);
  }

 private:
  std::chrono::milliseconds latency_;
};

TEST_F(PrunedTreeEngineTest, AStepCostLeavesOutWhatEveryProposalCostsWhateverItsDepth) {
  auto target = std::make_unique<ModelTarget>(models::CausalLM::load(pair_->target), models::KvCacheOptions{});
  const std::unique_ptr<Drafter> drafter = make_draft_model_drafter(models::CausalLM::load(pair_->draft));
  const std::chrono::milliseconds latency(10);
  DelayedDrafter remote(*drafter, latency);
  const StepCost cost = measure_step_cost(*target, remote);
  // A draft step of these tiny models is far below the latency; counted
  // per proposal, the latency alone would make it 10 ms.
  EXPECT_LT(cost.draft_s, 0.5 * std::chrono::duration<double>(latency).count());
  EXPECT_GT(cost.draft_s, 0.0);
}

// A target whose every verify first waits `per_node` for each drafted node
// it verifies, as a forward whose cost grows with its tokens (a CPU's).
class NodeCostTarget final : public Target {
 public:
  NodeCostTarget(Target& inner, std::chrono::milliseconds per_node) : inner_(inner), per_node_(per_node) {}
  int64_t vocab_size() const override { return inner_.vocab_size(); }
  int64_t max_positions() const override { return inner_.max_positions(); }
  void start(uint64_t slot, const std::vector<int32_t>& prompt, const TargetSettings& settings) override {
    inner_.start(slot, prompt, settings);
  }
  int64_t room(uint64_t slot) const override { return inner_.room(slot); }
  std::vector<Verdict> verify(const std::vector<VerifyItem>& items) override {
    size_t nodes = 0;
    for (const VerifyItem& item : items) nodes += item.draft->tokens.size();
    std::this_thread::sleep_for(per_node_ * static_cast<int64_t>(nodes));
    return inner_.verify(items);
  }
  void finish(uint64_t slot) override { inner_.finish(slot); }
  PrefillStats prefill_stats() const override { return inner_.prefill_stats(); }

 private:
  Target& inner_;
  std::chrono::milliseconds per_node_;
};

// What a node adds to a verify is at least the wait it adds: a lower bound
// the sleep guarantees however busy the machine is.
TEST_F(PrunedTreeEngineTest, ANodesStepCostIsWhatItAddsToAVerify) {
  ModelTarget model(models::CausalLM::load(pair_->target), models::KvCacheOptions{});
  const std::chrono::milliseconds per_node(2);
  NodeCostTarget target(model, per_node);
  const std::unique_ptr<Drafter> drafter = make_draft_model_drafter(models::CausalLM::load(pair_->draft));
  const StepCost cost = measure_step_cost(target, *drafter);
  EXPECT_GE(cost.verify_token_s, 0.5 * std::chrono::duration<double>(per_node).count());
}

TEST_F(PrunedTreeEngineTest, BadOptionsAreErrorsNamingThem) {
  EXPECT_TRUE(throws_error([&] { engine("ar", 0.1f); }, ErrorKind::kInvalidArgument, {"--tree pct", "does not draft"}));
  EXPECT_TRUE(throws_error([&] { engine("sd", 1.5f); }, ErrorKind::kInvalidArgument, {"--pct-threshold"}));
  EngineOptions o;
  o.engine = EngineKind::kSd;
  o.target = pair_->target;
  o.drafter = DrafterKind::kStand;
  o.tree = kPrunedTree;
  EXPECT_TRUE(throws_error([&] { make_engine(o); }, ErrorKind::kInvalidArgument, {"--tree pct", "stand"}));
  o.drafter = DrafterKind::kModel;
  o.draft = pair_->draft;
  o.pct_epsilon = -0.5f;
  EXPECT_TRUE(throws_error([&] { make_engine(o); }, ErrorKind::kInvalidArgument, {"--pct-epsilon"}));
}

}  // namespace
}  // namespace seed::spec
