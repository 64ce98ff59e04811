// generation_config.json: stop tokens and the release's sampling defaults.
#include "models/generation_config.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/throws_error.h"

namespace seed::models {
namespace {

using json = nlohmann::json;
using testing::throws_error;

TEST(GenerationConfigTest, ReadsEosListAndSamplingDefaults) {
  const json llama31 = {{"bos_token_id", 128000}, {"do_sample", true},  {"eos_token_id", {128001, 128008, 128009}},
                        {"temperature", 0.6},     {"top_p", 0.9},       {"transformers_version", "4.43.0"}};
  const GenerationConfig config = GenerationConfig::from_json(llama31, "generation_config.json");
  EXPECT_EQ(config.eos_token_ids, (std::vector<int32_t>{128001, 128008, 128009}));
  EXPECT_EQ(config.bos_token_id, 128000);
  EXPECT_EQ(config.pad_token_id, -1);
  ASSERT_TRUE(config.sampling.has_value());
  EXPECT_FLOAT_EQ(config.sampling->temperature, 0.6f);
  EXPECT_FLOAT_EQ(config.sampling->top_p, 0.9f);
  EXPECT_EQ(config.sampling->top_k, 0);
  EXPECT_EQ(stop_token_ids(128009, config), (std::vector<int32_t>{128009, 128001, 128008}));
}

TEST(GenerationConfigTest, SingleEosDoSampleFalseIsGreedyAndNoSamplingKeysLeaveItUnset) {
  const GenerationConfig greedy = GenerationConfig::from_json({{"eos_token_id", 2}, {"do_sample", false}}, "g.json");
  EXPECT_EQ(greedy.eos_token_ids, (std::vector<int32_t>{2}));
  ASSERT_TRUE(greedy.sampling.has_value());
  EXPECT_TRUE(greedy.sampling->greedy());
  EXPECT_FALSE(GenerationConfig::from_json({{"eos_token_id", nullptr}}, "g.json").sampling.has_value());
  EXPECT_EQ(stop_token_ids(-1, GenerationConfig{}), std::vector<int32_t>{});
}

TEST(GenerationConfigTest, WrongTypesNameTheFileAndField) {
  EXPECT_TRUE(throws_error([] { GenerationConfig::from_json({{"eos_token_id", {"x"}}}, "dir/generation_config.json"); },
                           ErrorKind::kInvalidArgument, {"dir/generation_config.json", "eos_token_id"}));
  EXPECT_TRUE(throws_error([] { GenerationConfig::from_json({{"top_p", 1.5}}, "g.json"); }, ErrorKind::kInvalidArgument,
                           {"g.json", "top_p"}));
}

}  // namespace
}  // namespace seed::models
