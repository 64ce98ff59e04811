// The engines' token invariants (models/base/counter_rng.h), on tiny random
// models written to real model folders and loaded through make_engine:
//   - greedy: every engine produces exactly `ar`'s tokens;
//   - sampled: `seed` and `seed-batch` produce exactly serial `sd`'s (and,
//     with tree drafts, `mcsd`'s) tokens, whatever the drafter count or the
//     request order;
//   - summarised logits give the host rows' tokens.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>

#include "tests/spec/engine_test_fixture.h"

namespace seed::spec {
namespace {

using ::seed::testing::tokens_of;

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

}  // namespace
}  // namespace seed::spec
