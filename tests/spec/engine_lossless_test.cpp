// The engines are lossless: over many streams the first two sampled tokens
// follow the target's exact distribution (chi-square), with top-token
// drafts, drafts drawn from q or from a truncated q', from host rows or from
// summarised logits, on the CPU and on a GPU.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include "tests/spec/chi_square.h"
#include "tests/spec/engine_test_fixture.h"
#include "tests/spec/sampled_trials.h"

namespace seed::spec {

// The first two tokens over many streams against p(x1) p(x2 | x1), computed
// from the target's logits directly; the draft's top tokens, and drafts
// drawn from its whole q and from a q' cut to its top 3 tokens or its 0.7
// nucleus (of 8).
void EngineTest::expect_sampled_engines_lossless(const std::string& device, LogitReads reads,
                                                 const ModelPair* pair) {
  if (pair == nullptr) pair = small_;
  constexpr int64_t kVocab = 8;
  constexpr int kTrials = 5000;
  const std::vector<int32_t> prompt = {1, 5, 2};
  SamplingParams sampling;
  sampling.temperature = 0.9f;
  auto target = models::CausalLM::load(pair->target);
  const std::vector<double> expected = ::seed::testing::two_token_law(*target, prompt, sampling.temperature, kVocab);
  const std::vector<GenRequest> batch = ::seed::testing::sampled_trials(prompt, sampling, kTrials, 2);
  // Top-token drafts (matching), then drafts drawn from q (rejection sampling).
  struct Case { std::string name; std::vector<int> k_config; DraftTruncation cut; bool drawn; };
  const DraftTruncation top3{3, 1.0f}, nucleus{0, 0.7f};
  for (const Case& c : {Case{"ar", {}, {}, false}, Case{"sd", {}, {}, false}, Case{"mcsd", {3, 2}, {}, false},
                        Case{"seed-batch", {}, {}, false}, Case{"sd", {}, {}, true}, Case{"mcsd", {3, 2}, {}, true},
                        Case{"seed", {2, 2}, {}, true}, Case{"sd", {}, top3, true}, Case{"mcsd", {3, 2}, top3, true},
                        Case{"seed", {2, 2}, nucleus, true}, Case{"seed-batch", {}, nucleus, true}}) {
    auto e = engine(c.name, c.k_config, 2, pair, true, c.cut, device, reads, c.drawn);
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

namespace {

TEST_F(EngineTest, SampledEnginesAreLossless) { expect_sampled_engines_lossless("cpu"); }

// A GPU verifies, and drafts from a draft model, from a summary of each row
// computed where the logits are (logit_summary.h); the same path on the CPU.
TEST_F(EngineTest, SampledEnginesAreLosslessFromSummarisedLogits) {
  expect_sampled_engines_lossless("cpu", LogitReads::kDeviceSummary);
}

// A draft whose LM head scores 5 of the 8 tokens (ModelConfig::
// draft_vocab_size) never proposes the other three: the target's residual
// draws them, and every engine stays lossless.
TEST_F(EngineTest, SampledEnginesAreLosslessWithADraftHeadOverPartOfTheVocabulary) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("seed_lossless_head_rows_" + std::to_string(::getpid()));
  models::CausalLM::load(small_->draft)->with_head_rows(torch::tensor({0L, 2L, 3L, 5L, 6L}))->save(dir.string(),
                                                                                                 torch::kFloat);
  const ModelPair pair{small_->target, dir.string()};
  expect_sampled_engines_lossless("cpu", LogitReads::kAuto, &pair);
  expect_sampled_engines_lossless("cpu", LogitReads::kDeviceSummary, &pair);
  std::filesystem::remove_all(dir);
}

// The same on a GPU: its forwards replay CUDA graphs.
TEST_F(EngineTest, OnCudaSampledEnginesAreLossless) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  expect_sampled_engines_lossless("cuda:0");
}

}  // namespace
}  // namespace seed::spec
