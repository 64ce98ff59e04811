// CausalLM's errors: a position past the context, an unknown or unavailable
// device and malformed inputs are clear errors that leave the cache as it
// was.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <string>
#include <vector>

#include "models/base/error.h"
#include "models/causal_lm.h"
#include "tests/models/tiny_models.h"

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

}  // namespace
}  // namespace seed::models
