// Every engine on a model pair of Llama 3's real shape (128,256 tokens,
// llama3 rope scaling, tied embeddings; tests/models/golden), prompts that
// use ids past 100k: every engine runs, and greedy output equals `ar`'s.
#include <gtest/gtest.h>

#include <filesystem>
#include <unistd.h>

#include "spec/engine/engine_factory.h"
#include "tests/tools/portable_weights.h"

namespace seed::spec {
namespace {

namespace fs = std::filesystem;

TEST(RealShapeEngines, EveryEngineGivesArTokensOnALlama3ShapedPair) {
  const fs::path dir = fs::temp_directory_path() / ("seed_real_shape_" + std::to_string(::getpid()));
  const std::string config = std::string(SEED_GOLDEN_DIR) + "/llama3.config.json";
  models::testing::write_portable_model(config, (dir / "target").string(), /*seed=*/0);
  models::testing::write_portable_model(config, (dir / "draft").string(), /*seed=*/1);

  std::vector<GenRequest> requests;
  for (int i = 0; i < 3; ++i) {
    GenRequest r;
    r.prompt_tokens = {128000, 9906 + i, 127999 - 31 * i, 100000 + 7 * i, 1234};
    r.max_new_tokens = 10;
    r.sampling.temperature = 0.0f;
    r.stream = static_cast<uint64_t>(i);
    requests.push_back(r);
  }
  std::vector<std::vector<int32_t>> expected;
  for (const std::string name : {"ar", "ar-batch", "sd", "mcsd", "seed", "seed-batch"}) {
    EngineOptions o;
    o.engine = EngineKind::parse(name);
    o.target = (dir / "target").string();
    o.draft = (dir / "draft").string();
    o.draft_length = 3;
    o.drafters = 2;
    o.kv_cache_mb = 64;
    const std::vector<Completion> out = make_engine(o)->generate(requests);
    std::vector<std::vector<int32_t>> tokens;
    for (const Completion& c : out) {
      ASSERT_NE(c.finish, FinishReason::kError) << name << ": " << c.error;
      ASSERT_FALSE(c.tokens.empty()) << name;
      tokens.push_back(c.tokens);
    }
    if (expected.empty()) expected = tokens;
    EXPECT_EQ(tokens, expected) << name;
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace seed::spec
