// `seed generate` on a model folder with tokenizer.json, tokenizer_config.json
// and generation_config.json instead of tokenizer.model: the release's
// sampling settings apply when the user gives none, and every id of the
// eos_token_id list ends the text. --chat renders the prompt with the
// folder's chat template (and --chat-var's variables) and adds no second BOS.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "models/hf_tokenizer/byte_level.h"
#include "tests/launch/command_outcome.h"

namespace seed {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr int kVocab = 320;  // make_tiny_model's vocab_size

// A random-weight model whose tokenizer is a byte-level BPE (ids 0-255 the
// bytes, 256 <|bos|>), and whose generation_config lists every id as eos.
fs::path write_model_folder() {
  const fs::path dir = fs::path(::testing::TempDir()) / ("generate_hf_" + std::to_string(getpid()));
  const testing::Outcome made = testing::run_command(std::string(MAKE_TINY_MODEL_BINARY) + " --out " + dir.string() +
                                                     " --hidden 64 --intermediate 160 --layers 2");
  EXPECT_EQ(made.exit_code, 0) << made.output;
  fs::remove(dir / "tokenizer.model");
  json vocab = json::object();
  for (int b = 0; b < 256; ++b) vocab[models::hf::byte_level_chars()[b]] = b;
  const json tokenizer = {
      {"added_tokens", {{{"id", 256}, {"content", "<|bos|>"}, {"special", true}, {"normalized", false}}}},
      {"normalizer", nullptr},
      {"pre_tokenizer", {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", true}}},
      {"post_processor", nullptr},
      {"decoder", {{"type", "ByteLevel"}}},
      {"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", json::array()}}}};
  std::ofstream(dir / "tokenizer.json") << tokenizer.dump();
  std::ofstream(dir / "tokenizer_config.json") << json{{"bos_token", "<|bos|>"}, {"add_bos_token", true}}.dump();
  json every_id = json::array();
  for (int id = 0; id < kVocab; ++id) every_id.push_back(id);
  std::ofstream(dir / "generation_config.json") << json{{"eos_token_id", every_id}, {"do_sample", false}}.dump();
  return dir;
}

TEST(GenerateHfCliTest, GenerationConfigSetsSamplingAndStopTokens) {
  const fs::path dir = write_model_folder();
  const std::string generate =
      std::string(SEED_BINARY) + " generate --model " + dir.string() + " --prompt 'hello' --max-new-tokens 8";
  const testing::Outcome defaults = testing::run_command(generate);
  ASSERT_EQ(defaults.exit_code, 0) << defaults.output;
  EXPECT_NE(defaults.output.find("sampling: temperature 0 top_k 0 top_p 1 (" + (dir / "generation_config.json").string() + ")"),
            std::string::npos)
      << defaults.output;
  EXPECT_NE(defaults.output.find("prompt 6 tokens"), std::string::npos) << defaults.output;  // <|bos|> + 5 bytes
  EXPECT_NE(defaults.output.find("generated 0 tokens"), std::string::npos) << defaults.output;
  EXPECT_NE(defaults.output.find("finish: eos"), std::string::npos) << defaults.output;

  const testing::Outcome given = testing::run_command(generate + " --temperature 0.5");
  ASSERT_EQ(given.exit_code, 0) << given.output;
  EXPECT_NE(given.output.find("sampling: temperature 0.5 top_k 0 top_p 1 (command line)"), std::string::npos)
      << given.output;
  fs::remove_all(dir);
}

TEST(GenerateHfCliTest, ChatRendersThePromptWithTheTemplate) {
  const fs::path dir = write_model_folder();
  const std::string generate = std::string(SEED_BINARY) + " generate --model " + dir.string() +
                               " --prompt 'hi' --max-new-tokens 4 --chat";
  const testing::Outcome missing = testing::run_command(generate);
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_NE(missing.output.find(dir.string() + "/tokenizer_config.json has no chat_template"), std::string::npos)
      << missing.output;

  std::ofstream(dir / "tokenizer_config.json")
      << json{{"bos_token", "<|bos|>"},
              {"add_bos_token", true},
              {"chat_template", "{{ bos_token }}{% for m in messages %}[{{ m.role }}]{{ m.content }}{% endfor %}"
                                "{% if add_generation_prompt %}[assistant]{% endif %}"
                                "{% if enable_thinking is defined and not enable_thinking %}[no-think]{% endif %}"}}
             .dump();
  const testing::Outcome chat = testing::run_command(generate + " --system 'Be brief.'");
  ASSERT_EQ(chat.exit_code, 0) << chat.output;
  EXPECT_NE(chat.output.find(R"(chat prompt: "<|bos|>[system]Be brief.[user]hi[assistant]")"), std::string::npos)
      << chat.output;
  // One <|bos|> (the template's) + 36 bytes: the tokenizer adds no second one.
  EXPECT_NE(chat.output.find("prompt 37 tokens"), std::string::npos) << chat.output;
  const testing::Outcome no_think = testing::run_command(generate + " --chat-var enable_thinking=false");
  ASSERT_EQ(no_think.exit_code, 0) << no_think.output;
  EXPECT_NE(no_think.output.find(R"(chat prompt: "<|bos|>[user]hi[assistant][no-think]")"), std::string::npos)
      << no_think.output;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace seed
