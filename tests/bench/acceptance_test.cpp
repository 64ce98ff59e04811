// Serial speculative decoding as the acceptance measurement runs it.
#include "bench/acceptance.h"

#include <gtest/gtest.h>

#include "models/base/error.h"
#include "tests/models/tiny_models.h"

namespace seed::bench {
namespace {

std::vector<std::vector<int32_t>> prompts() { return {{1, 5, 9, 3}, {2, 7}, {4, 4, 8, 15, 16, 23}}; }

AcceptanceOptions options(int k) {
  AcceptanceOptions o;
  o.draft_length = k;
  o.max_new_tokens = 24;
  o.sampling = SamplingParams{0.7f, 0, 1.0f};
  o.seed = 3;
  return o;
}

TEST(AcceptanceTest, ADraftIdenticalToTheTargetIsAlwaysAccepted) {
  const auto config = models::testing::tiny_config("llama");
  auto target = models::CausalLM::random(config, 1);
  auto draft = models::CausalLM::random(config, 1);
  const AcceptanceResult r = measure_acceptance(*target, *draft, prompts(), options(4));
  EXPECT_GT(r.proposed, 0);
  EXPECT_EQ(r.accepted, r.proposed);
  EXPECT_DOUBLE_EQ(r.tokens_per_round(), 5.0);  // k accepted + the bonus token
}

TEST(AcceptanceTest, ADifferentDraftIsAcceptedPartly) {
  const auto config = models::testing::tiny_config("llama");
  auto target = models::CausalLM::random(config, 1);
  auto draft = models::CausalLM::random(config, 2);
  const AcceptanceResult r = measure_acceptance(*target, *draft, prompts(), options(3));
  EXPECT_GT(r.alpha(), 0.0);
  EXPECT_LT(r.alpha(), 1.0);
  EXPECT_EQ(r.generated, r.accepted + r.rounds);
  // Deterministic: the same seeds give the same counts.
  const AcceptanceResult again = measure_acceptance(*target, *draft, prompts(), options(3));
  EXPECT_EQ(again.accepted, r.accepted);
  EXPECT_EQ(again.generated, r.generated);
}

TEST(AcceptanceTest, MismatchedVocabulariesAreRejected) {
  auto target = models::CausalLM::random(models::testing::tiny_config("llama"), 1);
  auto other = models::testing::tiny_config("llama");
  other.vocab_size = 80;
  auto draft = models::CausalLM::random(other, 1);
  EXPECT_THROW(measure_acceptance(*target, *draft, prompts(), options(2)), Error);
}

}  // namespace
}  // namespace seed::bench
