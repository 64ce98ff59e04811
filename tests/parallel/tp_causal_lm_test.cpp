// A model split over a tensor-parallel group of 2 ranks gives the logits of
// the whole model (within 1e-4) for every family variant, through prefill,
// incremental decoding and a token-tree forward; from random weights and
// from a model folder each rank loads only its shard of.
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "models/causal_lm.h"
#include "parallel/mpi_communicator.h"
#include "tests/models/tiny_models.h"
#include "tests/parallel/mpi_world.h"
#include "tests/parallel/tp_logits.h"
#include "tests/throws_error.h"

namespace seed::models {
namespace {

using parallel::testing::mpi_world;
using seed::testing::throws_error;
using testing::expect_same_logits;

constexpr int kTp = 2;
constexpr double kTolerance = 1e-4;
constexpr uint64_t kSeed = 11;

class TpCausalLmTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_GE(mpi_world().world_size(), kTp) << "run under mpirun -np 2 or more";
    group_ = parallel::make_mpi_communicator(0, kTp);
    if (!group_) GTEST_SKIP() << "world rank outside the tp group";
    options_.tp_group = group_.get();
  }
  std::unique_ptr<parallel::Communicator> group_;
  LoadOptions options_;
};

TEST_F(TpCausalLmTest, EveryVariantMatchesTheWholeModel) {
  for (const std::string& variant : testing::all_variants()) {
    const ModelConfig config = testing::tiny_config(variant);
    auto whole = CausalLM::random(config, kSeed);
    auto tp = CausalLM::random(config, kSeed, options_);
    EXPECT_EQ(tp->shard().size, kTp);
    EXPECT_LT(tp->weights().parameter_bytes(), whole->weights().parameter_bytes()) << variant;
    expect_same_logits(*tp, *whole, kTolerance, variant);
  }
}

TEST_F(TpCausalLmTest, UnevenVocabularyMatchesTheWholeModel) {
  ModelConfig config = testing::tiny_config("qwen2");  // tied: the embedding is the LM head
  config.vocab_size = 61;                             // ranks hold 31 and 30 rows
  auto whole = CausalLM::random(config, kSeed);
  auto tp = CausalLM::random(config, kSeed, options_);
  expect_same_logits(*tp, *whole, kTolerance, "vocab 61");
}

TEST_F(TpCausalLmTest, EachRankLoadsItsShardFromAModelFolder) {
  // One folder for the group: rank 0 names it after its pid and writes it.
  at::Tensor pid = at::full({1}, static_cast<int64_t>(getpid()), at::kLong);
  group_->broadcast(pid, 0);
  const std::string dir = ::testing::TempDir() + "seed-tp-model-" + std::to_string(pid.item<int64_t>());
  for (const char* variant : {"llama", "qwen2", "qwen3"}) {
    const ModelConfig config = testing::tiny_config(variant);
    if (group_->rank() == 0) {
      std::filesystem::create_directories(dir);
      CausalLM::random(config, kSeed)->save(dir, at::kFloat);
    }
    group_->barrier();
    auto whole = CausalLM::load(dir);
    auto tp = CausalLM::load(dir, options_);
    expect_same_logits(*tp, *whole, kTolerance, std::string("loaded ") + variant);
    group_->barrier();  // everyone has read the folder before it is rewritten
  }
  if (group_->rank() == 0) std::filesystem::remove_all(dir);
}

TEST_F(TpCausalLmTest, ShapeTheTpSizeDoesNotDivideIsRejectedBeforeLoading) {
  ModelConfig config = testing::tiny_config("llama");
  config.intermediate_size = 49;
  EXPECT_TRUE(throws_error([&] { CausalLM::random(config, kSeed, options_); }, ErrorKind::kInvalidArgument,
                           {"intermediate_size (49)", "tp size 2"}));
}

TEST_F(TpCausalLmTest, TrainingAndSavingNeedTheWholeModel) {
  auto tp = CausalLM::random(testing::tiny_config("llama"), kSeed, options_);
  EXPECT_TRUE(throws_error([&] { tp->forward_full(at::zeros({1, 3}, at::kLong)); }, ErrorKind::kInvalidArgument,
                           {"forward_full", "tp rank"}));
  EXPECT_TRUE(throws_error([&] { tp->save(::testing::TempDir() + "unused", at::kFloat); },
                           ErrorKind::kInvalidArgument, {"save", "tp rank"}));
}

}  // namespace
}  // namespace seed::models
