// CausalLM's errors: a position past the context, an unknown or unavailable
// device and malformed inputs are clear errors that leave the cache as it
// was; a model larger than the memory available is refused before it loads.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "models/base/error.h"
#include "models/base/json_fields.h"
#include "models/causal_lm.h"
#include "models/model_weights.h"
#include "models/safetensors.h"
#include "tests/models/tiny_models.h"
#include "tests/throws_error.h"

namespace seed::models {
namespace {

TEST(CausalLmErrors, PositionPastTheContextIsAnErrorAndLeavesTheCacheUnchanged) {
  auto model = CausalLM::random(testing::tiny_config("llama"), 1);
  KvCache cache = model->make_cache();
  const SequenceId seq = cache.create();
  model->forward({{seq, std::vector<int32_t>(90, 5), {}}}, cache, LogitsFor::kLast);
  try {
    model->forward({{seq, std::vector<int32_t>(10, 5), {}}}, cache, LogitsFor::kLast);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kOutOfRange);
    EXPECT_NE(std::string(e.what()).find("max_position_embeddings"), std::string::npos) << e.what();
  }
  EXPECT_EQ(cache.length(seq), 90);
}

TEST(CausalLmErrors, UnknownOrUnavailableDeviceIsAClearError) {
  for (const std::string device : {"gpu", "mps"}) {
    try {
      CausalLM::random(testing::tiny_config("llama"), 1, {device});
      FAIL() << "expected an error for " << device;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
      EXPECT_NE(std::string(e.what()).find(device), std::string::npos) << e.what();
    }
  }
  if (!torch::cuda::is_available()) {
    EXPECT_THROW(CausalLM::random(testing::tiny_config("llama"), 1, {"cuda:0"}), Error);
  }
  // What a launcher reads before loading (a target rank's NCCL device).
  EXPECT_TRUE(parse_device("cpu").is_cpu());
  EXPECT_EQ(parse_device("cuda:1").index(), 1);
  EXPECT_FALSE(parse_device("cuda").has_index());
  EXPECT_THROW(parse_device("mps"), Error);
}

TEST(CausalLmErrors, MalformedInputsAreRejectedBeforeTouchingTheCache) {
  auto model = CausalLM::random(testing::tiny_config("llama"), 1);
  KvCache cache = model->make_cache();
  const SequenceId seq = cache.create();
  auto expect_invalid = [&](const SequenceInput& input) {
    EXPECT_THROW(model->forward({input}, cache, LogitsFor::kAll), Error);
    EXPECT_EQ(cache.length(seq), 0);
  };
  expect_invalid({seq, {}, {}});               // no tokens
  expect_invalid({seq, {1, 2}, {-1, 1}});      // a node cannot be its own parent
  expect_invalid({seq, {1, 2}, {-1}});         // parents/tokens size mismatch
  expect_invalid({seq, {64}, {}});             // outside the vocabulary
}

// What a load is refused by is what it holds: the estimate from the config
// and the checkpoint's headers against the loaded weights' bytes, for
// matrices kept in float32 and in bfloat16 (the norms, float32 in both, are
// counted at the matrices' width, so the two differ by a fraction of them).
TEST(CausalLmErrors, TheWeightsALoadIsCheckedForAreTheOnesItHolds) {
  for (const auto dtype : {c10::kFloat, c10::kBFloat16}) {
    const std::filesystem::path dir =
        std::filesystem::temp_directory_path() / ("seed_held_bytes_" + std::to_string(::getpid()));
    const ModelConfig config = testing::tiny_config("llama");
    CausalLM::random(config, 1)->save(dir.string(), dtype);
    const auto loaded = CausalLM::load(dir.string());
    const c10::ScalarType held = held_matrix_dtype(Checkpoint::open(dir.string()), torch::TensorOptions());
    EXPECT_EQ(held, dtype);
    const double estimate = static_cast<double>(held_weight_bytes(config, TpShard::whole(config), held));
    EXPECT_NEAR(estimate / static_cast<double>(loaded->weights().parameter_bytes()), 1.0, 0.02) << dtype;
    std::filesystem::remove_all(dir);
  }
}

// A folder whose config claims about 800 GB of float32 weights is refused
// by its folder, the sizes and the ways out, before a tensor is read (its
// checkpoint holds the tiny model's).
TEST(CausalLmErrors, AModelLargerThanTheMemoryAvailableIsRefusedBeforeItLoads) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("seed_too_large_" + std::to_string(::getpid()));
  CausalLM::random(testing::tiny_config("llama"), 1)->save(dir.string(), c10::kFloat);
  const std::string config_path = (dir / "config.json").string();
  nlohmann::json config = read_json_file(config_path);
  config["intermediate_size"] = 2'000'000'000;
  std::ofstream(config_path) << config.dump();
  EXPECT_TRUE(::seed::testing::throws_error([&] { CausalLM::load(dir.string()); }, ErrorKind::kOutOfRange,
                                            {"model " + dir.string() + ": its weights take ", " GiB in Float on cpu",
                                             "GiB available", "--tp N", "--weights-dtype bfloat16"}));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace seed::models
