// RequestOutput's stop tokens, and the stop tokens a model folder gives;
// chat prompts rendered by the target's chat template where text becomes tokens.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "models/base/error.h"
#include "spec/engine/request_output.h"
#include "spec/engine/request_run.h"

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

TEST(RequestRun, ChatPromptsAreRenderedByTheTargetsTemplate) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("seed_chat_prompt_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  fs::copy_file(std::string(SEED_ZOO_DIR) + "/tiny-target/tokenizer.model", dir / "tokenizer.model");
  try {
    model_run_settings(dir.string(), std::string("sys"));
    ADD_FAILURE() << "a folder without a chat template was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find((dir / "tokenizer_config.json").string() + " has none"), std::string::npos)
        << e.what();
  }
  std::ofstream(dir / "tokenizer_config.json")
      << R"({"bos_token": "<s>", "chat_template": "{{ bos_token }}{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}"})";
  const RunSettings plain = model_run_settings(dir.string());
  const RunSettings chat = model_run_settings(dir.string(), std::string("Be brief."));
  ASSERT_NE(chat.chat_template, nullptr);
  // The template's leading BOS text is the one BOS; the turns follow as text.
  EXPECT_EQ(encode_prompt(chat, "2 + 2"), encode_prompt(plain, "system: Be brief.\nuser: 2 + 2\n"));
  EXPECT_EQ(encode_prompt(chat, "2 + 2")[0], plain.tokenizer->bos_id());
  const RunSettings no_system = model_run_settings(dir.string(), std::string());
  EXPECT_EQ(encode_prompt(no_system, "2 + 2"), encode_prompt(plain, "user: 2 + 2\n"));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace seed::spec
