// Serial speculative decoding as the acceptance measurement runs it.
#include "eval/acceptance.h"

#include <gtest/gtest.h>

#include <torch/torch.h>

#include <cmath>

#include "models/base/error.h"
#include "tests/models/tiny_models.h"

namespace seed::eval {
namespace {

std::vector<std::vector<int32_t>> prompts() { return {{1, 5, 9, 3}, {2, 7}, {4, 4, 8, 15, 16, 23}}; }

// Drafts drawn from the draft model's whole distribution (no cut), as the
// identities below assume.
AcceptanceOptions options(int k) {
  AcceptanceOptions o;
  o.sample_drafts = true;
  o.draft_cut = spec::DraftTruncation{0, 1.0f};
  o.draft_length = k;
  o.max_new_tokens = 24;
  o.sampling = SamplingParams{0.7f, 0, 1.0f};
  o.seed = 3;
  return o;
}

TEST(AcceptanceTest, ADraftIdenticalToTheTargetIsAlwaysAccepted) {
  const auto config = models::testing::tiny_config("llama");
  std::shared_ptr<models::CausalLM> target = models::CausalLM::random(config, 1);
  std::shared_ptr<models::CausalLM> draft = models::CausalLM::random(config, 1);
  const AcceptanceResult r = measure_acceptance(target, draft, prompts(), options(4));
  EXPECT_GT(r.proposed, 0);
  EXPECT_EQ(r.accepted, r.proposed);
  EXPECT_EQ(r.rejections, 0);
  EXPECT_DOUBLE_EQ(r.alpha(), 1.0);
  EXPECT_DOUBLE_EQ(r.tokens_per_round(), 5.0);  // k accepted + the bonus token
  // Every token was decided on and accepted.
  EXPECT_EQ(r.calibration.total(), r.proposed);
  EXPECT_EQ(r.calibration.accepted, r.calibration.tokens);
}

TEST(AcceptanceTest, CalibrationCountsTokensUpToTheFirstRejection) {
  const auto config = models::testing::tiny_config("llama");
  std::shared_ptr<models::CausalLM> target = models::CausalLM::random(config, 1);
  std::shared_ptr<models::CausalLM> draft = models::CausalLM::random(config, 2);
  AcceptanceOptions greedy = options(4);
  greedy.sampling = SamplingParams{0.0f, 0, 1.0f};
  const AcceptanceResult r = measure_acceptance(target, draft, prompts(), greedy);
  const Calibration& c = r.calibration;
  int64_t accepted = 0;
  for (const int64_t a : c.accepted) accepted += a;
  EXPECT_EQ(accepted, r.accepted);
  // Each round decides its accepted tokens and, unless all were, one rejected one.
  EXPECT_GE(c.total(), r.accepted);
  EXPECT_LE(c.total(), r.accepted + r.rounds);
  EXPECT_GT(c.total(), r.accepted) << "a random draft is sometimes rejected";
  for (int b = 0; b < Calibration::kBins; ++b) {
    if (c.tokens[b] == 0) continue;
    const double mean = c.confidence[b] / static_cast<double>(c.tokens[b]);
    EXPECT_GE(mean, b / 10.0);
    EXPECT_LE(mean, (b + 1) / 10.0);
  }
}

// A draft whose final norm is zero gives every token logit 0: a uniform q,
// so each drafted token has confidence 1/V and all fall in the lowest bin,
// whose mean confidence is 1/V. The ECE is then |acceptance rate - 1/V|.
TEST(AcceptanceTest, AUniformDraftsCalibrationErrorIsItsAcceptanceRateLessOneOverTheVocabulary) {
  const auto config = models::testing::tiny_config("llama");
  std::shared_ptr<models::CausalLM> target = models::CausalLM::random(config, 1);
  models::LlamaWeights weights = models::CausalLM::random(config, 2, models::testing::keeping_parameters())->weights();
  weights.norm = torch::zeros_like(weights.norm);
  auto flat = std::make_shared<models::CausalLM>(config, weights, target->tensor_options());
  const double one_over_vocab = 1.0 / static_cast<double>(config.vocab_size);
  for (const float temperature : {0.0f, 0.7f}) {
    AcceptanceOptions o = options(4);
    o.sampling.temperature = temperature;
    const Calibration c = measure_acceptance(target, flat, prompts(), o).calibration;
    ASSERT_GT(c.total(), 0);
    EXPECT_EQ(c.tokens[0], c.total()) << "temperature " << temperature;
    const double rate = static_cast<double>(c.accepted[0]) / static_cast<double>(c.total());
    if (temperature > 0) {
      EXPECT_GT(rate, 0.0) << "p(x) / q(x) accepts some";
    }
    EXPECT_NEAR(c.ece(), std::abs(rate - one_over_vocab), 1e-6) << "temperature " << temperature;
  }
}

TEST(AcceptanceTest, CalibrationErrorWeighsEachBinByItsTokens) {
  Calibration c;
  for (int i = 0; i < 9; ++i) c.add(0.95, true);
  c.add(0.95, false);  // bin 9: accepted 0.9, confidence 0.95
  for (int i = 0; i < 10; ++i) c.add(0.25, i < 5);  // bin 2: accepted 0.5, confidence 0.25
  c.add(1.0, true);  // confidence 1 falls in the top bin
  EXPECT_EQ(c.total(), 21);
  EXPECT_EQ(c.tokens[9], 11);
  const double top = std::abs(10.0 / 11.0 - (0.95 * 10 + 1.0) / 11.0);
  EXPECT_NEAR(c.ece(), 11.0 / 21.0 * top + 10.0 / 21.0 * 0.25, 1e-12);
  EXPECT_EQ(Calibration{}.ece(), 0.0);
}

TEST(AcceptanceTest, ADifferentDraftIsAcceptedPartly) {
  const auto config = models::testing::tiny_config("llama");
  std::shared_ptr<models::CausalLM> target = models::CausalLM::random(config, 1);
  std::shared_ptr<models::CausalLM> draft = models::CausalLM::random(config, 2);
  const AcceptanceResult r = measure_acceptance(target, draft, prompts(), options(3));
  EXPECT_GT(r.alpha(), 0.0);
  EXPECT_LT(r.alpha(), 1.0);
  // alpha counts the tokens verification tested: none after a rejection.
  EXPECT_GT(r.rejections, 0);
  EXPECT_LE(r.rejections, r.rounds);
  EXPECT_DOUBLE_EQ(r.alpha(), double(r.accepted) / double(r.accepted + r.rejections));
  EXPECT_LT(r.accepted_fraction(), r.alpha()) << "chains of 3 rejected early leave untested tokens";
  EXPECT_EQ(r.generated, r.accepted + r.rounds);
  // Deterministic: the same seeds give the same counts.
  const AcceptanceResult again = measure_acceptance(target, draft, prompts(), options(3));
  EXPECT_EQ(again.accepted, r.accepted);
  EXPECT_EQ(again.generated, r.generated);
}

// An EDD draft (the target's last layer over its first layer's hidden
// states) through the EDD drafter: the first round of each request has no
// draft, the others do, and the target accepts some of it.
TEST(AcceptanceTest, AnEddDraftReadsTheTargetsHiddenStates) {
  const auto config = models::testing::tiny_config("llama");
  std::shared_ptr<models::CausalLM> target = models::CausalLM::random(config, 1, models::testing::keeping_parameters());
  models::ModelConfig edd_config = config;
  edd_config.num_hidden_layers = 1;
  edd_config.edd_target_layer = 0;
  models::LlamaWeights weights = target->weights();
  weights.layers = {target->weights().layers.back()};
  auto edd = std::make_shared<models::CausalLM>(edd_config, weights, target->tensor_options());
  AcceptanceOptions greedy = options(4);
  greedy.sampling = SamplingParams{0.0f, 0, 1.0f};
  const AcceptanceResult r = measure_acceptance(target, edd, prompts(), greedy);
  EXPECT_GT(r.alpha(), 0.0);
  EXPECT_EQ(r.generated, r.accepted + r.rounds);
  EXPECT_GT(r.calibration.total(), 0);
  EXPECT_LE(r.proposed, 4 * (r.rounds - static_cast<int64_t>(prompts().size())));
}

TEST(AcceptanceTest, MismatchedVocabulariesAreRejected) {
  std::shared_ptr<models::CausalLM> target = models::CausalLM::random(models::testing::tiny_config("llama"), 1);
  auto other = models::testing::tiny_config("llama");
  other.vocab_size = 80;
  std::shared_ptr<models::CausalLM> draft = models::CausalLM::random(other, 1);
  EXPECT_THROW(measure_acceptance(target, draft, prompts(), options(2)), Error);
}

}  // namespace
}  // namespace seed::eval
