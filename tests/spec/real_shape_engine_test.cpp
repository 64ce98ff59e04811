// Every engine on model pairs of real shapes (tests/models/golden): Llama 3
// (128,256 tokens, llama3 rope scaling, tied embeddings) and Qwen3 (151,936
// tokens, per-head q/k norms, heads wider than hidden / heads), prompts
// that use ids past 100k: every engine runs, and greedy output equals `ar`'s.
#include <gtest/gtest.h>
#include <omp.h>
#include <torch/torch.h>

#include <filesystem>
#include <set>
#include <unistd.h>

#include "models/causal_lm.h"
#include "spec/engine/engine_factory.h"
#include "tests/tools/portable_weights.h"

namespace seed::spec {
namespace {

namespace fs = std::filesystem;

// Which weights the draft gets.
enum class Draft {
  kUnrelated,      // weights of their own: drafts are mostly rejected
  kTargetWeights,  // the target's: every greedy draft is the target's own choice
};

// `engine` on the pair written to `dir` (target/, draft/).
EngineOptions pair_options(const fs::path& dir, const std::string& engine, const std::string& device = "cpu") {
  EngineOptions o;
  o.engine = EngineKind::parse(engine);
  o.target = (dir / "target").string();
  o.draft = (dir / "draft").string();
  o.draft_length = 3;
  o.drafters = 2;
  o.kv_cache_mb = 64;
  o.device = device;
  return o;
}

// A target and a draft of the golden config `name`, and three greedy
// requests whose prompt i is prompt(i).
void expect_every_engine_gives_ar_tokens(const std::string& name, std::vector<int32_t> (*prompt)(int),
                                         const std::string& device = "cpu", Draft draft = Draft::kUnrelated) {
  const fs::path dir = fs::temp_directory_path() / ("seed_real_shape_" + name + "_" + std::to_string(::getpid()));
  const std::string config = std::string(SEED_GOLDEN_DIR) + "/" + name + ".config.json";
  models::testing::write_portable_model(config, (dir / "target").string(), /*seed=*/0);
  models::testing::write_portable_model(config, (dir / "draft").string(),
                                        /*seed=*/draft == Draft::kTargetWeights ? 0 : 1);

  std::vector<GenRequest> requests;
  for (int i = 0; i < 3; ++i) {
    GenRequest r;
    r.prompt_tokens = prompt(i);
    r.max_new_tokens = 10;
    r.sampling.temperature = 0.0f;
    r.stream = static_cast<uint64_t>(i);
    requests.push_back(r);
  }
  std::vector<std::vector<int32_t>> expected;
  for (const std::string engine : {"ar", "ar-batch", "sd", "mcsd", "seed", "seed-batch"}) {
    const EngineOptions o = pair_options(dir, engine, device);
    const std::unique_ptr<Engine> run = make_engine(o);
    const std::vector<Completion> out = run->generate(requests);
    if (draft == Draft::kTargetWeights && o.engine.drafts()) {
      // The draft's logits are the target's bits, so its greedy tokens are
      // the target's: every drafted token tested is accepted.
      const EngineStats stats = run->stats();
      EXPECT_GT(stats.accepted_tokens, 0) << name << " " << engine;
      EXPECT_EQ(stats.rejections, 0) << name << " " << engine;
    }
    std::vector<std::vector<int32_t>> tokens;
    for (const Completion& c : out) {
      ASSERT_NE(c.finish, FinishReason::kError) << engine << ": " << c.error;
      ASSERT_FALSE(c.tokens.empty()) << engine;
      tokens.push_back(c.tokens);
    }
    if (expected.empty()) expected = tokens;
    EXPECT_EQ(tokens, expected) << name << " " << engine << " on " << device;
  }
  fs::remove_all(dir);
}

TEST(RealShapeEngines, EveryEngineGivesArTokensOnALlama3ShapedPair) {
  expect_every_engine_gives_ar_tokens("llama3", [](int i) {
    return std::vector<int32_t>{128000, 9906 + i, 127999 - 31 * i, 100000 + 7 * i, 1234};
  });
}

// A 128,256-token pair whose drafts are accepted: the paths past the first
// token (sparse draft rows, accepted paths committed to the cache) run.
TEST(RealShapeEngines, ADraftWithTheTargetsWeightsIsAlwaysAcceptedOnALlama3ShapedPair) {
  expect_every_engine_gives_ar_tokens(
      "llama3", [](int i) { return std::vector<int32_t>{128000, 9906 + i, 127999 - 31 * i, 100000 + 7 * i, 1234}; },
      "cpu", Draft::kTargetWeights);
}

// On a GPU, where forwards replay CUDA graphs: the same equalities.
TEST(RealShapeEngines, OnCudaEveryEngineGivesArTokensOnALlama3ShapedPair) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  expect_every_engine_gives_ar_tokens(
      "llama3", [](int i) { return std::vector<int32_t>{128000, 9906 + i, 127999 - 31 * i, 100000 + 7 * i, 1234}; },
      "cuda:0");
}

// As on a GPU, acceptance from a summary of the logits and every verdict's
// last token drawn where they are (spec/engine/logit_summary.h): sampled
// engines, top-p among them, give the tokens they give from host rows, on
// a 128,256-token pair.
TEST(RealShapeEngines, SampledEnginesFromSummarisedLogitsGiveTheHostRowsTokensOnALlama3ShapedPair) {
  const fs::path dir = fs::temp_directory_path() / ("seed_real_shape_summary_" + std::to_string(::getpid()));
  const std::string config = std::string(SEED_GOLDEN_DIR) + "/llama3.config.json";
  models::testing::write_portable_model(config, (dir / "target").string(), /*seed=*/0);
  models::testing::write_portable_model(config, (dir / "draft").string(), /*seed=*/1);
  for (const SamplingParams sampling : {SamplingParams{1.0f}, SamplingParams{0.8f, 0, 0.9f}}) {
    std::vector<GenRequest> requests;
    for (int i = 0; i < 3; ++i) {
      GenRequest r;
      r.prompt_tokens = {128000, 9906 + i, 127999 - 31 * i, 100000 + 7 * i, 1234};
      r.max_new_tokens = 10;
      r.sampling = sampling;
      r.seed = 5;
      r.stream = static_cast<uint64_t>(i);
      requests.push_back(r);
    }
    for (const std::string engine : {"sd", "mcsd", "seed-batch"}) {
      std::vector<std::vector<int32_t>> tokens[2];
      for (const LogitReads reads : {LogitReads::kAuto, LogitReads::kDeviceSummary}) {
        EngineOptions o = pair_options(dir, engine);
        o.logit_reads = reads;
        for (const Completion& c : make_engine(o)->generate(requests)) {
          ASSERT_NE(c.finish, FinishReason::kError) << engine << ": " << c.error;
          tokens[reads == LogitReads::kDeviceSummary].push_back(c.tokens);
        }
      }
      EXPECT_EQ(tokens[1], tokens[0]) << engine << " T " << sampling.temperature << " top-p " << sampling.top_p;
    }
  }
  fs::remove_all(dir);
}

// Sampled requests verified in one batch walk side by side on the forward's
// threads over a real vocabulary's host rows (each race reads every token):
// each gets the tokens it gets alone.
TEST(RealShapeEngines, SampledRequestsWalkedSideBySideGetTheirOwnTokensOnALlama3ShapedPair) {
  const fs::path dir = fs::temp_directory_path() / ("seed_real_shape_walks_" + std::to_string(::getpid()));
  const std::string config = std::string(SEED_GOLDEN_DIR) + "/llama3.config.json";
  models::testing::write_portable_model(config, (dir / "target").string(), /*seed=*/0);
  models::testing::write_portable_model(config, (dir / "draft").string(), /*seed=*/0);
  std::vector<GenRequest> requests;
  for (int i = 0; i < 4; ++i) {
    GenRequest r;
    r.prompt_tokens = {128000, 9906 + i, 127999 - 31 * i, 1234};
    r.max_new_tokens = 8;
    r.sampling.temperature = 1.0f;
    r.seed = 11;
    r.stream = static_cast<uint64_t>(i);
    requests.push_back(r);
  }
  const int threads = omp_get_max_threads();
  omp_set_num_threads(2);
  std::vector<std::vector<int32_t>> alone;
  const std::unique_ptr<Engine> ar = make_engine(pair_options(dir, "ar"));
  for (const GenRequest& r : requests) alone.push_back(ar->generate({r}).front().tokens);
  for (const std::string engine : {"ar-batch", "seed-batch"}) {
    std::vector<std::vector<int32_t>> together;
    for (const Completion& c : make_engine(pair_options(dir, engine))->generate(requests)) {
      ASSERT_NE(c.finish, FinishReason::kError) << engine << ": " << c.error;
      together.push_back(c.tokens);
    }
    EXPECT_EQ(together, alone) << engine;
  }
  omp_set_num_threads(threads);
  fs::remove_all(dir);
}

// A draft with the target's weights whose LM head keeps about 4,100 of the
// 128,256 tokens (ModelConfig::draft_vocab_size): where its tokens hold
// every token the target chooses, every draft is accepted, greedy or
// sampled (the draft's race over its columns keys each by its token, as
// the target's race does), so each of its rows scores the token it maps
// to; where they hold none, none is; the output is ar's either way.
TEST(RealShapeEngines, ADraftHeadOverPartOfALlama3VocabularyProposesTheTokensItsRowsScore) {
  const fs::path dir = fs::temp_directory_path() / ("seed_real_shape_head_rows_" + std::to_string(::getpid()));
  models::testing::write_portable_model(std::string(SEED_GOLDEN_DIR) + "/llama3.config.json",
                                        (dir / "target").string(), /*seed=*/0);
  models::testing::write_portable_model(std::string(SEED_GOLDEN_DIR) + "/llama3.config.json",
                                        (dir / "draft").string(), /*seed=*/0);
  const auto target = models::CausalLM::load((dir / "target").string());
  for (const float temperature : {0.0f, 1.0f}) {
    std::vector<GenRequest> requests;
    for (int i = 0; i < 3; ++i) {
      GenRequest r;
      r.prompt_tokens = {128000, 9906 + i, 127999 - 31 * i, 100000 + 7 * i, 1234};
      r.max_new_tokens = 10;
      r.sampling.temperature = temperature;
      r.seed = 3;
      r.stream = static_cast<uint64_t>(i);
      requests.push_back(r);
    }
    std::vector<std::vector<int32_t>> expected;
    std::set<int64_t> chosen;
    for (const Completion& c : make_engine(pair_options(dir, "ar"))->generate(requests)) {
      expected.push_back(c.tokens);
      chosen.insert(c.tokens.begin(), c.tokens.end());
    }
    for (const bool holds_chosen : {true, false}) {
      std::set<int64_t> kept;
      for (int64_t t = 0; t < 128256; t += 31) {
        if (chosen.count(t) == 0) kept.insert(t);
      }
      if (holds_chosen) kept.insert(chosen.begin(), chosen.end());
      fs::remove_all(dir / "draft");
      target->with_head_rows(torch::tensor(std::vector<int64_t>(kept.begin(), kept.end())))
          ->save((dir / "draft").string(), torch::kFloat);
      for (const std::string engine : {"sd", "mcsd", "seed-batch"}) {
        const std::unique_ptr<Engine> run = make_engine(pair_options(dir, engine));
        std::vector<std::vector<int32_t>> tokens;
        for (const Completion& c : run->generate(requests)) tokens.push_back(c.tokens);
        const std::string what = engine + " at T " + std::to_string(temperature) +
                                 (holds_chosen ? " holding" : " without") + " the target's tokens";
        EXPECT_EQ(tokens, expected) << what;
        const EngineStats stats = run->stats();
        if (holds_chosen) {
          EXPECT_GT(stats.accepted_tokens, 0) << what;
          EXPECT_EQ(stats.rejections, 0) << what;
        } else {
          EXPECT_EQ(stats.accepted_tokens, 0) << what;
        }
      }
    }
  }
  fs::remove_all(dir);
}

TEST(RealShapeEngines, EveryEngineGivesArTokensOnAQwen3ShapedPair) {
  // <|im_start|>, "user", "\n", ids past 100k, the last ids of the vocabulary
  expect_every_engine_gives_ar_tokens("qwen3", [](int i) {
    return std::vector<int32_t>{151644, 872, 198, 100000 + 7 * i, 151935 - 31 * i, 1234 + i};
  });
}

// A draft stored in float32 beside a bfloat16 target is held in bfloat16
// (draft_load_options). Here the draft holds the target's own values, so
// held in bfloat16 its logits are the target's bits, and every drafted
// token is accepted even where p is nearly flat over 128,256 tokens (T =
// 16): the draft's race over q (= p) on the target's stream is the
// target's token. A draft's top token would be accepted p(top) of the
// time, small there, and so would drafts drawn from q' (its 32 most likely
// tokens); at T = 1, where those hold p's mass, drawn drafts pass rejection
// sampling too. A draft stored narrower than its target is not widened.
TEST(RealShapeEngines, AFloat32DraftOfABfloat16TargetIsHeldInBfloat16) {
  const fs::path dir = fs::temp_directory_path() / ("seed_real_shape_dtype_" + std::to_string(::getpid()));
  models::testing::write_portable_model(std::string(SEED_GOLDEN_DIR) + "/llama3.config.json",
                                        (dir / "portable").string(), /*seed=*/0);
  models::LoadOptions bf16;
  bf16.weights_dtype = models::WeightDtype::kBFloat16;
  models::CausalLM::load((dir / "portable").string(), bf16)->save((dir / "target").string(), torch::kBFloat16);
  models::CausalLM::load((dir / "target").string(), {})->save((dir / "draft").string(), torch::kFloat);

  EngineOptions o = pair_options(dir, "seed-batch");
  EXPECT_EQ(draft_load_options(o).weights_dtype, models::WeightDtype::kBFloat16);
  EXPECT_EQ(models::CausalLM::load(o.draft, draft_load_options(o))->weights().lm_head.dtype(), torch::kBFloat16);
  std::vector<GenRequest> requests;
  for (int i = 0; i < 3; ++i) {
    GenRequest r;
    r.prompt_tokens = {128000, 9906 + i, 127999 - 31 * i, 100000 + 7 * i, 1234};
    r.max_new_tokens = 12;
    r.seed = 3;
    r.stream = static_cast<uint64_t>(i);
    requests.push_back(r);
  }
  for (const bool sample_drafts : {false, true}) {
    o.sample_drafts = sample_drafts;
    for (GenRequest& r : requests) r.sampling.temperature = sample_drafts ? 1.0f : 16.0f;
    const std::unique_ptr<Engine> engine = make_engine(o);
    for (const Completion& c : engine->generate(requests)) ASSERT_NE(c.finish, FinishReason::kError) << c.error;
    EXPECT_GT(engine->stats().accepted_tokens, 0) << "sampled drafts " << sample_drafts;
    EXPECT_EQ(engine->stats().rejections, 0) << "sampled drafts " << sample_drafts;
  }

  // The other way round: the bfloat16 folder drafts for the float32 one,
  // and keeps its bfloat16; a dtype asked for is every model's.
  std::swap(o.target, o.draft);
  EXPECT_EQ(draft_load_options(o).weights_dtype, std::nullopt);
  o.weights_dtype = models::WeightDtype::kFloat32;
  EXPECT_EQ(draft_load_options(o).weights_dtype, models::WeightDtype::kFloat32);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace seed::spec
