// LoadedModels: a folder loaded with the same options again is the model
// held; other options load another; a miss lets go of the models the
// current run has not asked for, and nothing else.
#include "models/loaded_models.h"

#include <gtest/gtest.h>
#include <torch/torch.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>

#include "tests/models/tiny_models.h"
#include "tests/throws_error.h"

namespace seed::models {
namespace {

namespace fs = std::filesystem;

class LoadedModelsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new fs::path(fs::temp_directory_path() / ("seed_loaded_models_test_" + std::to_string(::getpid())));
    for (const std::string name : {"a", "b", "c"}) {
      CausalLM::random(testing::tiny_config("llama"), name[0])->save((*dir_ / name).string(), torch::kFloat32);
    }
  }
  static void TearDownTestSuite() {
    fs::remove_all(*dir_);
    delete dir_;
  }
  static std::string folder(const std::string& name) { return (*dir_ / name).string(); }
  static fs::path* dir_;
};

fs::path* LoadedModelsTest::dir_ = nullptr;

TEST_F(LoadedModelsTest, TheSameFolderAndOptionsGiveTheModelHeldAndOtherOptionsAnother) {
  LoadedModels models;
  const LoadedModels::Loaded first = models.load(folder("a"), {});
  EXPECT_FALSE(first.reused);
  const LoadedModels::Loaded again = models.load(folder("a"), {});
  EXPECT_TRUE(again.reused);
  EXPECT_EQ(again.model, first.model);

  LoadOptions half;
  half.weights_dtype = WeightDtype::kBFloat16;
  const LoadedModels::Loaded other = models.load(folder("a"), half);
  EXPECT_FALSE(other.reused);
  EXPECT_NE(other.model, first.model);
  EXPECT_EQ(other.model->weights().layers[0].qkv.dtype(), torch::kBFloat16);
  // Both were asked for by this run: the second load let go of neither.
  EXPECT_EQ(models.load(folder("a"), {}).model, first.model);
}

TEST_F(LoadedModelsTest, AMissLetsGoOfTheModelsTheRunHasNotAskedForAndNothingElse) {
  LoadedModels models;
  std::weak_ptr<CausalLM> a = models.load(folder("a"), {}).model;
  std::weak_ptr<CausalLM> b = models.load(folder("b"), {}).model;

  // A run that asks only for what is held keeps the rest.
  models.next_run();
  EXPECT_TRUE(models.load(folder("a"), {}).reused);
  models.next_run();
  EXPECT_TRUE(models.load(folder("b"), {}).reused);
  EXPECT_FALSE(a.expired());

  // A run that loads c after asking for b: a goes, b stays.
  models.next_run();
  EXPECT_TRUE(models.load(folder("b"), {}).reused);
  std::weak_ptr<CausalLM> c = models.load(folder("c"), {}).model;
  EXPECT_TRUE(a.expired());
  EXPECT_FALSE(b.expired());
  EXPECT_FALSE(c.expired());
  EXPECT_FALSE(models.load(folder("a"), {}).reused);
}

TEST_F(LoadedModelsTest, AFolderThatDoesNotLoadThrowsWhatLoadingThrows) {
  LoadedModels models;
  EXPECT_TRUE(seed::testing::throws_error([&] { models.load(folder("missing"), {}); }, ErrorKind::kNotFound,
                                          {"missing"}));
}

}  // namespace
}  // namespace seed::models
