// Tests for ModelConfig: real Hugging Face configs parse to the right shapes
// and parameter counts, configs round-trip, and each malformed config.json
// is refused with the file and field named.
#include "models/model_config.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "models/base/error.h"
#include "tests/throws_error.h"

namespace seed::models {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

using seed::testing::throws_error;

// meta-llama/Llama-3.1-8B-Instruct/config.json as published.
constexpr char kLlama31Config[] = R"({
  "architectures": ["LlamaForCausalLM"],
  "attention_bias": false,
  "attention_dropout": 0.0,
  "bos_token_id": 128000,
  "eos_token_id": [128001, 128008, 128009],
  "hidden_act": "silu",
  "hidden_size": 4096,
  "initializer_range": 0.02,
  "intermediate_size": 14336,
  "max_position_embeddings": 131072,
  "mlp_bias": false,
  "model_type": "llama",
  "num_attention_heads": 32,
  "num_hidden_layers": 32,
  "num_key_value_heads": 8,
  "pretraining_tp": 1,
  "rms_norm_eps": 1e-05,
  "rope_scaling": {
    "factor": 8.0,
    "high_freq_factor": 4.0,
    "low_freq_factor": 1.0,
    "original_max_position_embeddings": 8192,
    "rope_type": "llama3"
  },
  "rope_theta": 500000.0,
  "tie_word_embeddings": false,
  "torch_dtype": "bfloat16",
  "transformers_version": "4.42.3",
  "use_cache": true,
  "vocab_size": 128256
})";

// Qwen/Qwen2-0.5B/config.json as published: no attention_bias key, tied head.
constexpr char kQwen2Config[] = R"({
  "architectures": ["Qwen2ForCausalLM"],
  "attention_dropout": 0.0,
  "bos_token_id": 151643,
  "eos_token_id": 151643,
  "hidden_act": "silu",
  "hidden_size": 896,
  "initializer_range": 0.02,
  "intermediate_size": 4864,
  "max_position_embeddings": 131072,
  "max_window_layers": 24,
  "model_type": "qwen2",
  "num_attention_heads": 14,
  "num_hidden_layers": 24,
  "num_key_value_heads": 2,
  "rms_norm_eps": 1e-06,
  "rope_theta": 1000000.0,
  "sliding_window": 131072,
  "tie_word_embeddings": true,
  "torch_dtype": "bfloat16",
  "transformers_version": "4.40.1",
  "use_cache": true,
  "use_sliding_window": false,
  "vocab_size": 151936
})";

// Qwen/Qwen3-0.6B/config.json as published: 16 heads of 128 over a hidden
// size of 1024, no attention bias, tied head.
constexpr char kQwen3Config[] = R"({
  "architectures": ["Qwen3ForCausalLM"],
  "attention_bias": false,
  "attention_dropout": 0.0,
  "bos_token_id": 151643,
  "eos_token_id": 151645,
  "head_dim": 128,
  "hidden_act": "silu",
  "hidden_size": 1024,
  "initializer_range": 0.02,
  "intermediate_size": 3072,
  "max_position_embeddings": 40960,
  "max_window_layers": 28,
  "model_type": "qwen3",
  "num_attention_heads": 16,
  "num_hidden_layers": 28,
  "num_key_value_heads": 8,
  "rms_norm_eps": 1e-06,
  "rope_scaling": null,
  "rope_theta": 1000000,
  "sliding_window": null,
  "tie_word_embeddings": true,
  "torch_dtype": "bfloat16",
  "transformers_version": "4.51.0",
  "use_cache": true,
  "use_sliding_window": false,
  "vocab_size": 151936
})";

// A small valid config that error tests break one field at a time.
json tiny_config() {
  return {{"model_type", "llama"},       {"vocab_size", 64},       {"hidden_size", 32},
          {"intermediate_size", 48},     {"num_hidden_layers", 2}, {"num_attention_heads", 4},
          {"num_key_value_heads", 2},    {"rope_scaling", nullptr}};
}

void expect_same(const ModelConfig& a, const ModelConfig& b) {
  EXPECT_EQ(a.model_type, b.model_type);
  EXPECT_EQ(a.vocab_size, b.vocab_size);
  EXPECT_EQ(a.hidden_size, b.hidden_size);
  EXPECT_EQ(a.intermediate_size, b.intermediate_size);
  EXPECT_EQ(a.num_hidden_layers, b.num_hidden_layers);
  EXPECT_EQ(a.num_attention_heads, b.num_attention_heads);
  EXPECT_EQ(a.num_key_value_heads, b.num_key_value_heads);
  EXPECT_EQ(a.head_dim, b.head_dim);
  EXPECT_EQ(a.max_position_embeddings, b.max_position_embeddings);
  EXPECT_EQ(a.rms_norm_eps, b.rms_norm_eps);
  EXPECT_EQ(a.rope_theta, b.rope_theta);
  EXPECT_EQ(a.rope_scaling.rope_type, b.rope_scaling.rope_type);
  EXPECT_EQ(a.rope_scaling.factor, b.rope_scaling.factor);
  EXPECT_EQ(a.rope_scaling.low_freq_factor, b.rope_scaling.low_freq_factor);
  EXPECT_EQ(a.rope_scaling.high_freq_factor, b.rope_scaling.high_freq_factor);
  EXPECT_EQ(a.rope_scaling.original_max_position_embeddings,
            b.rope_scaling.original_max_position_embeddings);
  EXPECT_EQ(a.attention_bias, b.attention_bias);
  EXPECT_EQ(a.tie_word_embeddings, b.tie_word_embeddings);
  EXPECT_EQ(a.bos_token_id, b.bos_token_id);
  EXPECT_EQ(a.eos_token_ids, b.eos_token_ids);
  EXPECT_EQ(a.torch_dtype, b.torch_dtype);
}

class ModelConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("seed_test_" + std::to_string(::getpid()) + "_config_" + test->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Writes `text` as config.json and returns its path.
  std::string write_config(const std::string& text) const {
    const std::string path = (dir_ / "config.json").string();
    std::ofstream(path) << text;
    return path;
  }

  // Expects `config` (written to config.json) to be refused as an invalid
  // argument naming the file and each of `needles`.
  ::testing::AssertionResult rejects(const json& config, std::vector<std::string> needles) const {
    const std::string path = write_config(config.dump());
    needles.push_back(path);
    return throws_error([&] { ModelConfig::from_file(path); }, ErrorKind::kInvalidArgument,
                        needles);
  }

  fs::path dir_;
};

TEST_F(ModelConfigTest, ParsesRealLlama3Config) {
  const ModelConfig c = ModelConfig::from_file(write_config(kLlama31Config));
  EXPECT_EQ(c.model_type, "llama");
  EXPECT_EQ(c.vocab_size, 128256);
  EXPECT_EQ(c.num_key_value_heads, 8);
  EXPECT_EQ(c.head_dim, 128);
  EXPECT_EQ(c.group_size(), 4);
  EXPECT_EQ(c.kv_size(), 1024);
  EXPECT_EQ(c.rms_norm_eps, 1e-5);
  EXPECT_EQ(c.rope_theta, 500000.0);
  EXPECT_EQ(c.rope_scaling.rope_type, "llama3");
  EXPECT_EQ(c.rope_scaling.factor, 8.0);
  EXPECT_EQ(c.rope_scaling.original_max_position_embeddings, 8192);
  EXPECT_FALSE(c.attention_bias);
  EXPECT_EQ(c.bos_token_id, 128000);
  EXPECT_EQ(c.eos_token_ids, (std::vector<int64_t>{128001, 128008, 128009}));
  EXPECT_EQ(c.torch_dtype, "bfloat16");
  EXPECT_EQ(c.num_parameters(), 8030261248);  // the published 8.03B
}

// The real shapes `seed bench` measures parse, with the parameter counts
// of the models they come from.
TEST_F(ModelConfigTest, BenchShapesHaveTheirModelsParameterCounts) {
  const std::string dir = SEED_BENCH_CONFIGS;
  EXPECT_EQ(ModelConfig::from_file(dir + "/llama-3.2-1b.json").num_parameters(), 1235814400);
  EXPECT_EQ(ModelConfig::from_file(dir + "/llama-3.1-8b.json").num_parameters(), 8030261248);
}

TEST_F(ModelConfigTest, Qwen2ImpliesAttentionBiasAndCountsTiedEmbeddingsOnce) {
  const ModelConfig c = ModelConfig::from_json(json::parse(kQwen2Config), "qwen2.json");
  EXPECT_TRUE(c.attention_bias);
  EXPECT_TRUE(c.tie_word_embeddings);
  EXPECT_EQ(c.head_dim, 64);
  EXPECT_EQ(c.eos_token_ids, std::vector<int64_t>{151643});
  EXPECT_EQ(c.num_parameters(), 494032768);  // Qwen2-0.5B as published

  json explicit_bias = json::parse(kQwen2Config);
  explicit_bias["attention_bias"] = false;
  EXPECT_FALSE(ModelConfig::from_json(explicit_bias, "qwen2.json").attention_bias);
}

TEST_F(ModelConfigTest, Qwen3HasQkNormsAndAHeadDimOfItsOwn) {
  const ModelConfig c = ModelConfig::from_json(json::parse(kQwen3Config), "qwen3.json");
  EXPECT_TRUE(c.has_qk_norm());
  EXPECT_FALSE(c.attention_bias);
  EXPECT_EQ(c.head_dim, 128);
  EXPECT_EQ(c.q_size(), 2048);  // twice the hidden size
  EXPECT_EQ(c.kv_size(), 1024);
  EXPECT_EQ(c.max_position_embeddings, 40960);
  EXPECT_EQ(c.num_parameters(), 596049920);  // Qwen3-0.6B: 0.44B besides the embedding
  EXPECT_FALSE(ModelConfig::from_json(json::parse(kQwen2Config), "qwen2.json").has_qk_norm());

  json no_head_dim = json::parse(kQwen3Config);
  no_head_dim.erase("head_dim");  // transformers' Qwen3Config default, not hidden / heads
  EXPECT_EQ(ModelConfig::from_json(no_head_dim, "qwen3.json").head_dim, 128);
  json biased = json::parse(kQwen3Config);
  biased["attention_bias"] = true;  // would need a bias on o_proj too
  EXPECT_TRUE(rejects(biased, {"field 'attention_bias' is true", "Qwen3"}));
}

// seed attends to every earlier position: a sliding window shorter than the
// context ends the context there (beyond it the function would differ).
TEST_F(ModelConfigTest, ASlidingWindowEndsTheContext) {
  const json mistral = {{"model_type", "mistral"},   {"vocab_size", 32000},
                        {"hidden_size", 4096},       {"intermediate_size", 14336},
                        {"num_hidden_layers", 32},   {"num_attention_heads", 32},
                        {"num_key_value_heads", 8},  {"max_position_embeddings", 32768},
                        {"sliding_window", 4096}};
  EXPECT_EQ(ModelConfig::from_json(mistral, "mistral-v0.1.json").max_position_embeddings, 4096);
  json unwindowed = mistral;
  unwindowed["sliding_window"] = nullptr;  // Mistral v0.2 on
  EXPECT_EQ(ModelConfig::from_json(unwindowed, "mistral-v0.2.json").max_position_embeddings, 32768);

  json qwen2 = json::parse(kQwen2Config);
  qwen2["max_position_embeddings"] = 32768;
  qwen2["sliding_window"] = 4096;
  qwen2["use_sliding_window"] = false;  // as Qwen2 and Qwen2.5 ship
  EXPECT_EQ(ModelConfig::from_json(qwen2, "qwen2.json").max_position_embeddings, 32768);
  qwen2["use_sliding_window"] = true;
  EXPECT_EQ(ModelConfig::from_json(qwen2, "qwen2.json").max_position_embeddings, 4096);
}

TEST_F(ModelConfigTest, DefaultsKvHeadsAndHeadDimLikeLlama2) {
  const json llama2 = {{"model_type", "llama"},       {"vocab_size", 32000},
                       {"hidden_size", 4096},         {"intermediate_size", 11008},
                       {"num_hidden_layers", 32},     {"num_attention_heads", 32},
                       {"rope_scaling", nullptr},     {"eos_token_id", 2}};
  const ModelConfig c = ModelConfig::from_json(llama2, "llama2.json");
  EXPECT_EQ(c.num_key_value_heads, 32);
  EXPECT_EQ(c.head_dim, 128);
  EXPECT_EQ(c.rope_scaling.rope_type, "default");
  EXPECT_EQ(c.num_parameters(), 6738415616);  // Llama-2-7B as published
}

TEST_F(ModelConfigTest, ReadsLegacyLinearRopeScalingKey) {
  json config = tiny_config();
  config["rope_scaling"] = {{"type", "linear"}, {"factor", 2.0}};
  const ModelConfig c = ModelConfig::from_json(config, "linear.json");
  EXPECT_EQ(c.rope_scaling.rope_type, "linear");
  EXPECT_EQ(c.rope_scaling.factor, 2.0);
}

TEST_F(ModelConfigTest, RoundTripsThroughJsonAndFile) {
  for (const char* text : {kLlama31Config, kQwen2Config, kQwen3Config}) {
    const ModelConfig original = ModelConfig::from_json(json::parse(text), "original.json");
    expect_same(ModelConfig::from_json(original.to_json(), "round_trip.json"), original);

    const std::string path = (dir_ / "saved.json").string();
    original.save(path);
    expect_same(ModelConfig::from_file(path), original);
  }
}

TEST_F(ModelConfigTest, ToJsonWritesHuggingFaceKeys) {
  const ModelConfig c = ModelConfig::from_json(json::parse(kQwen2Config), "qwen2.json");
  const json out = c.to_json();
  EXPECT_EQ(out["architectures"], json::array({"Qwen2ForCausalLM"}));
  EXPECT_EQ(out["model_type"], "qwen2");
  EXPECT_TRUE(out["rope_scaling"].is_null());
  EXPECT_EQ(out["eos_token_id"], 151643);  // a single id is written as an int

  const json llama = ModelConfig::from_file(write_config(kLlama31Config)).to_json();
  EXPECT_EQ(llama["architectures"], json::array({"LlamaForCausalLM"}));
  EXPECT_EQ(llama["rope_scaling"]["rope_type"], "llama3");
  EXPECT_EQ(llama["eos_token_id"], json::array({128001, 128008, 128009}));
  EXPECT_EQ(ModelConfig::from_json(json::parse(kQwen3Config), "qwen3.json").to_json()["architectures"],
            json::array({"Qwen3ForCausalLM"}));
}

TEST_F(ModelConfigTest, MissingFileIsNotFound) {
  const std::string path = (dir_ / "absent.json").string();
  EXPECT_TRUE(throws_error([&] { ModelConfig::from_file(path); }, ErrorKind::kNotFound, {path}));
}

TEST_F(ModelConfigTest, InvalidJsonIsCorruptionWithPosition) {
  const std::string path = write_config("{\n  \"vocab_size\": 64,\n  \"hidden_size\": \n}");
  EXPECT_TRUE(throws_error([&] { ModelConfig::from_file(path); }, ErrorKind::kCorruption,
                           {path, "line 4"}));
}

TEST_F(ModelConfigTest, MissingRequiredFieldIsInvalidArgument) {
  json config = tiny_config();
  config.erase("hidden_size");
  EXPECT_TRUE(rejects(config, {"required field 'hidden_size' is missing"}));
}

TEST_F(ModelConfigTest, WrongTypeIsInvalidArgument) {
  json config = tiny_config();
  config["hidden_size"] = "32";
  EXPECT_TRUE(rejects(config, {"field 'hidden_size' must be an integer"}));
  config = tiny_config();
  config["num_hidden_layers"] = 2.5;
  EXPECT_TRUE(rejects(config, {"field 'num_hidden_layers' must be an integer"}));
  config = tiny_config();
  config["eos_token_id"] = json::array({1, "two"});
  EXPECT_TRUE(rejects(config, {"field 'eos_token_id' must be an integer"}));
  config = tiny_config();
  config["rope_scaling"] = {{"rope_type", "llama3"}, {"factor", "8"}};
  EXPECT_TRUE(rejects(config, {"field 'rope_scaling.factor' must be a number"}));
}

TEST_F(ModelConfigTest, HeadsNotDivisibleByKvHeadsIsInvalidArgument) {
  json config = tiny_config();
  config["num_key_value_heads"] = 3;
  EXPECT_TRUE(rejects(config, {"'num_attention_heads' (4)", "'num_key_value_heads' (3)"}));
}

TEST_F(ModelConfigTest, HiddenSizeNotDivisibleByHeadsNeedsHeadDim) {
  json config = tiny_config();
  config["num_attention_heads"] = 6;
  config["num_key_value_heads"] = 6;
  EXPECT_TRUE(rejects(config, {"'hidden_size' (32)", "'num_attention_heads' (6)"}));
  config["head_dim"] = 8;  // an explicit head_dim need not divide hidden_size
  EXPECT_EQ(ModelConfig::from_json(config, "explicit.json").q_size(), 48);
}

TEST_F(ModelConfigTest, OddHeadDimIsInvalidArgument) {
  json config = tiny_config();
  config["head_dim"] = 7;
  EXPECT_TRUE(rejects(config, {"field 'head_dim' (7) must be even"}));
}

TEST_F(ModelConfigTest, UnknownRopeTypeIsInvalidArgument) {
  json config = tiny_config();
  config["rope_scaling"] = {{"rope_type", "yarn"}, {"factor", 4.0}};
  EXPECT_TRUE(rejects(config, {"field 'rope_scaling.rope_type' is 'yarn'"}));
  config["rope_scaling"] = {{"rope_type", "llama3"}, {"factor", 8.0}};
  EXPECT_TRUE(rejects(config, {"required field 'rope_scaling.low_freq_factor' is missing"}));
}

TEST_F(ModelConfigTest, UnknownModelTypeIsInvalidArgument) {
  json config = tiny_config();
  config["model_type"] = "gpt2";
  EXPECT_TRUE(rejects(config, {"field 'model_type' is 'gpt2'", "llama, mistral, qwen2, qwen3"}));
}

TEST_F(ModelConfigTest, UnsupportedMlpIsInvalidArgument) {
  json config = tiny_config();
  config["hidden_act"] = "gelu";
  EXPECT_TRUE(rejects(config, {"field 'hidden_act' is 'gelu'"}));
  config = tiny_config();
  config["mlp_bias"] = true;
  EXPECT_TRUE(rejects(config, {"field 'mlp_bias'"}));
}

TEST_F(ModelConfigTest, ValidateRejectsNonPositiveSizes) {
  ModelConfig c = ModelConfig::from_json(tiny_config(), "tiny.json");
  c.validate();
  c.intermediate_size = 0;
  EXPECT_TRUE(throws_error([&] { c.validate(); }, ErrorKind::kInvalidArgument,
                           {"field 'intermediate_size' must be positive"}));
  json config = tiny_config();
  config["num_attention_heads"] = 0;  // must not divide by zero deriving head_dim
  EXPECT_TRUE(rejects(config, {"field 'num_attention_heads' must be positive"}));
}

}  // namespace
}  // namespace seed::models
