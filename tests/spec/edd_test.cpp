// EDD drafts (a one-layer draft reading the target's hidden states) on tiny
// random models: the target's KV cache keeps the hidden states a full
// forward computes; feeding them a round at a time gives the logits of
// recomputing the whole prefix; every speculative engine with an EDD draft
// (chains, fixed trees, pruned trees) gives ar's greedy tokens and serial
// sd's sampled ones, losslessly (chi-square); misuse is an error naming it.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <filesystem>

#include "models/causal_lm.h"
#include "spec/drafters/model/edd_drafter.h"
#include "spec/engine/engine_factory.h"
#include "spec/engine/model_target.h"
#include "tests/spec/chi_square.h"
#include "tests/spec/engine_fixtures.h"
#include "tests/spec/sampled_trials.h"
#include "tests/throws_error.h"

namespace seed::spec {
namespace {

namespace fs = std::filesystem;
using ::seed::testing::ModelPair;
using ::seed::testing::tokens_of;
using ::seed::testing::throws_error;
using ::seed::testing::write_edd;

class EddTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    pairs_ = new ::seed::testing::TestModelPairs("seed_edd_test");
    edd_ = write_edd(pairs_->pair.target, pairs_->dir / "edd", 0);
    small_edd_ = write_edd(pairs_->small.target, pairs_->dir / "small_edd", 0);
  }
  static void TearDownTestSuite() { delete pairs_; }

  static std::unique_ptr<Engine> engine(const std::string& name, const std::string& tree = "",
                                        bool small = false, DraftTruncation cut = {}) {
    EngineOptions o;
    o.draft_cut = cut;
    o.engine = EngineKind::parse(name);
    o.target = small ? pairs_->small.target : pairs_->pair.target;
    o.draft = small ? small_edd_ : edd_;
    o.draft_length = 4;
    o.tree = tree;
    if (tree == kPrunedTree) o.pct_threshold = 0.05f;
    o.drafters = 2;
    return make_engine(o);
  }

  static std::vector<GenRequest> requests(float temperature) {
    return ::seed::testing::varied_requests(6, temperature, 24);
  }

  static ::seed::testing::TestModelPairs* pairs_;
  static std::string edd_, small_edd_;
};

::seed::testing::TestModelPairs* EddTest::pairs_ = nullptr;
std::string EddTest::edd_, EddTest::small_edd_;

TEST_F(EddTest, TheKvCacheKeepsTheHiddenStatesOfAFullForward) {
  torch::NoGradGuard no_grad;
  auto model = models::CausalLM::load(pairs_->pair.target);
  models::KvCacheOptions options;
  options.hidden_layer = 0;
  models::KvCache cache = model->make_cache(options);
  const std::vector<int32_t> prompt = {3, 9, 1, 22, 5, 17, 40};
  const models::SequenceId seq = cache.create();
  model->forward({{seq, prompt, {}}}, cache, models::LogitsFor::kLast);
  // A tree of three nodes, of which the path 0 -> 2 is kept.
  model->forward({{seq, {8, 30, 12}, {-1, -1, 0}}}, cache, models::LogitsFor::kAll);
  cache.commit_path(seq, static_cast<int64_t>(prompt.size()), {0, 2});

  std::vector<int64_t> full = {3, 9, 1, 22, 5, 17, 40, 8, 12};
  at::Tensor expected;
  model->forward_full(torch::tensor(full).unsqueeze(0), std::nullopt, 0, &expected);
  std::vector<int64_t> slots;
  cache.append_slots(seq, slots);
  const at::Tensor kept = cache.hidden_states().index_select(0, torch::tensor(slots));
  EXPECT_TRUE(torch::allclose(kept, expected[0], 1e-5, 1e-5));
}

TEST_F(EddTest, FeedingHiddenStatesRoundByRoundEqualsRecomputingThePrefix) {
  torch::NoGradGuard no_grad;
  auto edd = models::CausalLM::load(edd_);
  const int64_t hidden = edd->config().hidden_size;
  torch::manual_seed(3);
  const at::Tensor states = torch::randn({12, hidden});
  const std::vector<int32_t> tokens = {5, 1, 7, 33, 2, 8, 61, 4, 4, 19, 0, 12, 6};  // the last: the bonus

  // Rounds as the EDD drafter runs them: the new hidden states, a bonus token and
  // a drafted node, whose rows are dropped before the next round.
  models::KvCache cache = edd->make_cache();
  const models::SequenceId seq = cache.create();
  at::Tensor incremental;
  for (const auto& [from, to] : std::vector<std::pair<int64_t, int64_t>>{{0, 5}, {5, 9}, {9, 12}}) {
    models::SequenceInput input{seq, {tokens.begin() + from, tokens.begin() + to + 1}, {}};
    input.soft_prompt = states.narrow(0, from, to - from);
    input.shareable = static_cast<int32_t>(to - from);
    incremental = edd->forward({input}, cache, models::LogitsFor::kLast);
    models::SequenceInput node{seq, {11}, {}};
    node.shareable = 0;
    edd->forward({node}, cache, models::LogitsFor::kLast);
    cache.truncate(seq, to);
  }

  // The whole prefix at once, and the training forward on [H ; E(bonus)].
  models::KvCache fresh = edd->make_cache();
  models::SequenceInput whole{fresh.create(), tokens, {}};
  whole.soft_prompt = states;
  const at::Tensor recomputed = edd->forward({whole}, fresh, models::LogitsFor::kLast);
  EXPECT_TRUE(torch::allclose(incremental, recomputed, 1e-5, 1e-5));

  const at::Tensor inputs = torch::cat({states, edd->embed_rows(torch::tensor({int64_t{6}}))}, 0).unsqueeze(0);
  const at::Tensor allowed = torch::ones({13, 13}, torch::kBool).tril();
  const at::Tensor trained = edd->forward_inputs(inputs, torch::arange(13), allowed, 12);
  EXPECT_TRUE(torch::allclose(trained[0], recomputed, 1e-4, 1e-4));
}

TEST_F(EddTest, GreedyEveryEngineProducesTheArTokens) {
  const auto reference = tokens_of(engine("ar")->generate(requests(0.0f)));
  for (const std::string tree : {"", kPrunedTree}) {
    for (const std::string name : {"sd", "mcsd", "seed", "seed-batch"}) {
      auto e = engine(name, tree);
      EXPECT_EQ(tokens_of(e->generate(requests(0.0f))), reference) << name << " tree '" << tree << "'";
      EXPECT_GT(e->stats().alpha(), 0.0) << name << " tree '" << tree << "'";
    }
  }
}

TEST_F(EddTest, SampledSeedEnginesProduceSerialSdTokens) {
  for (const std::string tree : {"", kPrunedTree}) {
    const auto sd = tokens_of(engine("sd", tree)->generate(requests(1.0f)));
    EXPECT_EQ(tokens_of(engine("seed", tree)->generate(requests(1.0f))), sd) << tree;
    EXPECT_EQ(tokens_of(engine("seed-batch", tree)->generate(requests(1.0f))), sd) << tree;
  }
}

// The second and third sampled tokens over many streams against
// sum_x p(x) p(y | x) p(z | x, y): the first token comes from the round that
// brings the prompt's hidden states, the next two from a round with an EDD
// draft.
TEST_F(EddTest, SampledDraftsAreLossless) {
  constexpr int64_t kVocab = 8;
  constexpr int kTrials = 5000;
  SamplingParams sampling;
  sampling.temperature = 0.9f;
  auto target = models::CausalLM::load(pairs_->small.target);
  std::vector<double> expected(kVocab * kVocab, 0.0);
  {
    torch::NoGradGuard no_grad;
    const auto softmax_last = [&](const std::vector<int64_t>& seq) {
      return torch::softmax(target->forward_full(torch::tensor(seq).unsqueeze(0))[0][-1] / sampling.temperature, -1);
    };
    const at::Tensor first = softmax_last({1, 5, 2});
    for (int64_t x = 0; x < kVocab; ++x) {
      const at::Tensor second = softmax_last({1, 5, 2, x});
      for (int64_t y = 0; y < kVocab; ++y) {
        const at::Tensor third = softmax_last({1, 5, 2, x, y});
        const double pxy = first[x].item<double>() * second[y].item<double>();
        for (int64_t z = 0; z < kVocab; ++z) expected[y * kVocab + z] += pxy * third[z].item<double>();
      }
    }
  }
  const std::vector<GenRequest> batch = ::seed::testing::sampled_trials({1, 5, 2}, sampling, kTrials, 3);
  // Chains from the whole q and from q' cut to the top 3 (of 8) or the 0.7
  // nucleus; pruned trees are deterministic, whatever the cut.
  struct Case { std::string tree; DraftTruncation cut; };
  for (const Case& c : {Case{"", {}}, Case{"", {3, 1.0f}}, Case{"", {0, 0.7f}}, Case{kPrunedTree, {3, 1.0f}}}) {
    const std::string& tree = c.tree;
    auto e = engine("sd", tree, /*small=*/true, c.cut);
    std::vector<int64_t> counts(kVocab * kVocab, 0);
    for (const Completion& out : e->generate(batch)) {
      ASSERT_EQ(out.tokens.size(), 3u);
      ++counts[out.tokens[1] * kVocab + out.tokens[2]];
    }
    const auto fit = ::seed::testing::chi_square(counts, expected, kTrials);
    std::printf("edd sd tree '%s', q' top-%d top-p %.1f: chi-square %.4g (%d dof), p = %.4g, alpha %.3f\n",
                tree.c_str(), c.cut.top_k, c.cut.top_p, fit.statistic, fit.dof, fit.p_value, e->stats().alpha());
    EXPECT_GT(fit.p_value, 0.001) << tree;
    EXPECT_GT(e->stats().alpha(), 0.0) << tree;
  }
}

TEST_F(EddTest, TheFirstProposalWaitsForTheTargetsHiddenStates) {
  auto edd = std::shared_ptr<const models::CausalLM>(models::CausalLM::load(edd_));
  models::KvCacheOptions options;
  options.hidden_layer = 0;
  ModelTarget target(models::CausalLM::load(pairs_->pair.target), options);
  const std::unique_ptr<Drafter> drafter = make_edd_drafter(edd);
  DraftSettings settings;
  settings.k_config = {1, 1, 1};
  const std::vector<int32_t> prompt = {4, 8, 15, 16, 23, 42};
  target.start(1, prompt, {});
  drafter->start(1, prompt, settings);
  const DraftTree first = drafter->propose(1, 3);
  EXPECT_TRUE(first.tokens.empty());
  const Verdict verdict = target.verify({{1, &first}}).front();
  EXPECT_EQ(verdict.hidden_from, 0);
  EXPECT_EQ(verdict.hidden.size(), prompt.size() * static_cast<size_t>(edd->config().hidden_size));
  drafter->advance(1, verdict);
  const DraftTree second = drafter->propose(1, 3);
  EXPECT_EQ(second.tokens.size(), 3u);
  const Verdict next = target.verify({{1, &second}}).front();
  EXPECT_EQ(next.hidden_from, static_cast<int64_t>(prompt.size()));
  EXPECT_EQ(next.hidden.size(), next.tokens.size() * static_cast<size_t>(edd->config().hidden_size));

  // A verdict from a target that keeps no hidden states.
  Verdict bare = next;
  bare.hidden.clear();
  EXPECT_TRUE(throws_error([&] { drafter->advance(1, bare); }, ErrorKind::kInvalidArgument, {"hidden", "layer 0"}));
}

TEST_F(EddTest, AnEddThatDoesNotFitTheTargetIsAnErrorNamingDraft) {
  const std::string deep = write_edd(pairs_->pair.target, pairs_->dir / "deep_edd", 7);
  EngineOptions o;
  o.engine = EngineKind::parse("sd");
  o.target = pairs_->pair.target;
  o.draft = deep;
  EXPECT_TRUE(throws_error([&] { make_engine(o); }, ErrorKind::kInvalidArgument, {"--draft", "layer 7", "2 layers"}));
}

}  // namespace
}  // namespace seed::spec
