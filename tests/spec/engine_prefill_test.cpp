// Prompts in the engines: the prefix cache changes no token and computes
// fewer prompt tokens, and a prefill ahead of the first verify changes no
// verdict.
#include <gtest/gtest.h>

#include <tuple>

#include "tests/spec/engine_test_fixture.h"
#include "tests/spec/shared_prefix_requests.h"

namespace seed::spec {
namespace {

using ::seed::testing::shared_prefix_requests;
using ::seed::testing::tokens_of;

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

}  // namespace
}  // namespace seed::spec
