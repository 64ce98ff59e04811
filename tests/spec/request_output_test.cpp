// RequestOutput's stop tokens, and the stop tokens a model folder gives.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "spec/request_output.h"
#include "spec/request_run.h"

namespace seed::spec {
namespace {

TEST(RequestOutput, AnyStopTokenEndsTheRequestWithoutJoiningIt) {
  for (const int32_t stop : {5, 9}) {
    RequestOutput output(nullptr, {5, 9}, 10, {});
    EXPECT_FALSE(output.push(3));
    EXPECT_TRUE(output.push(stop));
    const Completion c = output.take();
    EXPECT_EQ(c.finish, FinishReason::kEos);
    EXPECT_EQ(c.tokens, std::vector<int32_t>{3});
  }
  RequestOutput none(nullptr, {}, 2, {});
  EXPECT_FALSE(none.push(5));
  EXPECT_TRUE(none.push(9));
  EXPECT_EQ(none.take().finish, FinishReason::kLength);
}

TEST(RequestOutput, AModelFoldersGenerationConfigListsItsStopTokens) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("seed_stop_tokens_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  EXPECT_TRUE(model_run_settings(dir.string()).stop_tokens.empty());
  std::ofstream(dir / "generation_config.json") << R"({"eos_token_id": [128001, 128008, 128009]})";
  const RunSettings settings = model_run_settings(dir.string());
  EXPECT_EQ(settings.tokenizer, nullptr);
  EXPECT_EQ(settings.stop_tokens, (std::vector<int32_t>{128001, 128008, 128009}));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace seed::spec
