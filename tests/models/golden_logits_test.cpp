// seed's logits against transformers' on models with real shapes: Llama 3
// (128,256-token vocabulary, llama3 rope scaling, tied embeddings), Qwen2
// (q/k/v bias, 151,936 tokens), Qwen3 (per-head q/k norms, heads twice as
// wide as hidden / heads) and Mistral (one kv head, untied head).
//
// The weights are portable (tests/tools/portable_weights.h), so the
// fixtures hold only transformers' outputs: per position the argmax, the
// log-sum-exp and the logits of 24 probe tokens, on CPU and on CUDA.
// scripts/golden_logits.py wrote them on a GPU machine; the note at the top
// of each fixture names the transformers and torch versions. A config whose
// fixture has not been written yet skips, naming the file and the command.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <unistd.h>

#include "models/causal_lm.h"
#include "tests/tools/portable_weights.h"

namespace seed::models {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// float32 sums over 64-wide rows and 128k-wide log-sum-exps; a wrong rope,
// bias or norm moves logits by far more (ItSeesLlama3RopeScaling).
constexpr double kTolerance = 2e-3;

json read_json(const fs::path& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  return json::parse(in);
}

class GoldenLogitsTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    golden_ = fs::path(SEED_GOLDEN_DIR);
    const fs::path fixture = golden_ / (GetParam() + ".logits.json");
    if (!fs::exists(fixture)) {
      GTEST_SKIP() << fixture.string() << " is missing; on a machine with torch and transformers run "
                   << "python3 scripts/golden_logits.py --configs tests/models/golden --out tests/models/golden --only "
                   << GetParam();
    }
    fixture_ = read_json(fixture);
    dir_ = fs::temp_directory_path() / ("seed_golden_" + GetParam() + "_" + std::to_string(::getpid()));
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Writes the model of `config_path` and returns seed's logits [positions, V].
  at::Tensor seed_logits(const fs::path& config_path, const std::string& device,
                         std::optional<WeightDtype> dtype = std::nullopt) {
    testing::write_portable_model(config_path.string(), dir_.string(), fixture_["seed"].get<uint64_t>());
    LoadOptions options;
    options.device = device;
    options.weights_dtype = dtype;
    auto model = CausalLM::load(dir_.string(), options);
    KvCache cache = model->make_cache();
    const SequenceId seq = cache.create();
    const auto ids = fixture_["input_ids"].get<std::vector<int32_t>>();
    return model->forward({{seq, ids, {}}}, cache, LogitsFor::kAll)[0].to(torch::kCPU, torch::kDouble);
  }

  // Largest difference from transformers' `device` run, over every position's
  // log-sum-exp and probe logits; argmax must agree where the fixture's
  // winner leads the runner-up by more than the tolerance.
  double max_difference(const at::Tensor& logits, const std::string& device, double tolerance = kTolerance) {
    return max_difference(logits, fixture_, device, tolerance);
  }
  static double max_difference(const at::Tensor& logits, const json& fixture, const std::string& device,
                               double tolerance) {
    const json& expected = fixture["devices"][device];
    const auto probes = fixture["probe_ids"].get<std::vector<int64_t>>();
    const at::Tensor probe_index = torch::tensor(probes, torch::kLong);
    double worst = 0;
    for (int64_t pos = 0; pos < logits.size(0); ++pos) {
      const at::Tensor row = logits[pos];
      worst = std::max(worst, std::abs(row.logsumexp(0).item<double>() - expected["logsumexp"][pos].get<double>()));
      const at::Tensor mine = row.index_select(0, probe_index);
      const at::Tensor theirs = torch::tensor(expected["probe_logits"][pos].get<std::vector<double>>(), torch::kDouble);
      worst = std::max(worst, (mine - theirs).abs().max().item<double>());
      const int64_t their_argmax = expected["argmax"][pos].get<int64_t>();
      const auto top2 = row.topk(2);
      const bool clear_winner = (std::get<0>(top2)[0] - std::get<0>(top2)[1]).item<double>() > tolerance;
      if (clear_winner) {
        EXPECT_EQ(row.argmax().item<int64_t>(), their_argmax) << "position " << pos;
      }
    }
    return worst;
  }

  fs::path golden_, dir_;
  json fixture_;
};

TEST_P(GoldenLogitsTest, CheckpointHoldsTheParametersTransformersHas) {
  const ModelConfig config = ModelConfig::from_file((golden_ / (GetParam() + ".config.json")).string());
  std::set<std::string> ours, theirs;
  for (const auto& [name, shape] : testing::checkpoint_layout(config)) ours.insert(name);
  for (const auto& [name, shape] : fixture_["parameters"].items()) theirs.insert(name);
  EXPECT_EQ(ours, theirs);
}

TEST_P(GoldenLogitsTest, CpuLogitsEqualTransformers) {
  const at::Tensor logits = seed_logits(golden_ / (GetParam() + ".config.json"), "cpu");
  EXPECT_LT(max_difference(logits, "cpu"), kTolerance);
}

TEST_P(GoldenLogitsTest, CudaLogitsEqualTransformers) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  ASSERT_TRUE(fixture_["devices"].contains("cuda")) << "fixture has no cuda run";
  const at::Tensor logits = seed_logits(golden_ / (GetParam() + ".config.json"), "cuda:0");
  EXPECT_LT(max_difference(logits, "cuda"), kTolerance);
}

// bfloat16 on CUDA against transformers' bfloat16 on CUDA
// (NAME.bfloat16.logits.json, from golden_logits.py --dtype bfloat16). Two
// bfloat16 implementations round at different points: logits of magnitude
// 8-16 are 1/16 apart in bfloat16, and a few roundings of the residual
// stream move them by a few of those steps; a wrong rope, norm or bias moves
// them by whole units.
TEST_P(GoldenLogitsTest, CudaBfloat16LogitsEqualTransformers) {
  constexpr double kBfloat16Tolerance = 0.25;
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  const fs::path fixture = golden_ / (GetParam() + ".bfloat16.logits.json");
  if (!fs::exists(fixture)) {
    GTEST_SKIP() << fixture.string() << " is missing; on a machine with a GPU, torch and transformers run "
                 << "python3 scripts/golden_logits.py --configs tests/models/golden --out tests/models/golden "
                 << "--dtype bfloat16 --only " << GetParam();
  }
  const at::Tensor logits = seed_logits(golden_ / (GetParam() + ".config.json"), "cuda:0", WeightDtype::kBFloat16);
  const double worst = max_difference(logits, read_json(fixture), "cuda", kBfloat16Tolerance);
  RecordProperty("max_difference", std::to_string(worst));
  EXPECT_LT(worst, kBfloat16Tolerance);
}

INSTANTIATE_TEST_SUITE_P(RealShapes, GoldenLogitsTest, ::testing::Values("llama3", "qwen2", "qwen3", "mistral"));

// The fixture can tell: the same Llama 3 model without its rope scaling is
// far outside the tolerance.
TEST(GoldenLogits, ItSeesLlama3RopeScaling) {
  const fs::path golden(SEED_GOLDEN_DIR);
  const json fixture = read_json(golden / "llama3.logits.json");
  json config = read_json(golden / "llama3.config.json");
  config["rope_scaling"] = nullptr;
  const fs::path dir = fs::temp_directory_path() / ("seed_golden_norope_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "unscaled.config.json") << config.dump(2);
  testing::write_portable_model((dir / "unscaled.config.json").string(), (dir / "model").string(),
                                fixture["seed"].get<uint64_t>());
  auto model = CausalLM::load((dir / "model").string());
  KvCache cache = model->make_cache();
  const SequenceId seq = cache.create();
  const at::Tensor logits =
      model->forward({{seq, fixture["input_ids"].get<std::vector<int32_t>>(), {}}}, cache, LogitsFor::kAll)[0];
  const auto probes = fixture["probe_ids"].get<std::vector<int64_t>>();
  const at::Tensor mine = logits.to(torch::kDouble).index_select(1, torch::tensor(probes, torch::kLong));
  fs::remove_all(dir);
  double worst = 0;
  for (int64_t pos = 0; pos < mine.size(0); ++pos) {
    const auto row = fixture["devices"]["cpu"]["probe_logits"][pos].get<std::vector<double>>();
    worst = std::max(worst, (mine[pos] - torch::tensor(row, torch::kDouble)).abs().max().item<double>());
  }
  EXPECT_GT(worst, 50 * kTolerance);
}

// The generator both implementations share, pinned to values the Python
// side printed (scripts/golden_logits.py).
TEST(PortableWeights, MatchTheReferenceValues) {
  EXPECT_EQ(testing::splitmix64(0), 0xE220A8397B1DCDAFull);
  EXPECT_EQ(testing::fnv1a64("model.norm.weight"), 0xD6D6E5AFD11604E4ull);
  const at::Tensor norm = testing::portable_tensor("model.norm.weight", {3}, 0);
  EXPECT_FLOAT_EQ(norm[0].item<float>(), 0.8194751262664794f);
  EXPECT_FLOAT_EQ(norm[1].item<float>(), 0.928520655632019f);
  EXPECT_FLOAT_EQ(norm[2].item<float>(), 0.8640798568725586f);
}

}  // namespace
}  // namespace seed::models
