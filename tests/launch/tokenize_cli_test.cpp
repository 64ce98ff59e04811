// `seed tokenize` as a user runs it, on a hand-written tokenizer.json folder:
// encoding, decoding, chat templates, and the messages for bad input.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/launch/command_outcome.h"

namespace seed {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// A character-level byte-fallback BPE: <unk> <s> </s>, ▁ a b, merge ▁ a.
fs::path write_model_folder() {
  const fs::path dir = fs::path(::testing::TempDir()) / ("tokenize_cli_" + std::to_string(getpid()));
  fs::create_directories(dir);
  json vocab = {{"<unk>", 0}, {"<s>", 1}, {"</s>", 2}, {"\u2581", 3}, {"a", 4}, {"b", 5}, {"\u2581a", 6}};
  const json special = [] {
    json tokens = json::array();
    for (const auto& [id, content] : {std::pair{0, "<unk>"}, {1, "<s>"}, {2, "</s>"}}) {
      tokens.push_back({{"id", id}, {"content", content}, {"special", true}, {"normalized", false}});
    }
    return tokens;
  }();
  const json tokenizer = {
      {"added_tokens", special},
      {"normalizer",
       {{"type", "Sequence"},
        {"normalizers",
         {{{"type", "Prepend"}, {"prepend", "\u2581"}},
          {{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", "\u2581"}}}}}},
      {"pre_tokenizer", nullptr},
      {"post_processor", nullptr},
      {"decoder",
       {{"type", "Sequence"},
        {"decoders",
         {{{"type", "Replace"}, {"pattern", {{"String", "\u2581"}}}, {"content", " "}},
          {{"type", "Fuse"}},
          {{"type", "Strip"}, {"content", " "}, {"start", 1}, {"stop", 0}}}}}},
      {"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", {"\u2581 a"}}, {"unk_token", "<unk>"}}}};
  std::ofstream(dir / "tokenizer.json") << tokenizer.dump();
  std::ofstream(dir / "tokenizer_config.json") << json{{"bos_token", "<s>"}, {"eos_token", "</s>"}, {"add_bos_token", true}}.dump();
  return dir;
}

// Runs `seed tokenize` on `input`; the output holds stdout, and stderr too
// when `with_log` (seed may log warnings about the machine there).
testing::Outcome tokenize(const fs::path& dir, const std::string& flags, const std::string& input, bool with_log = false) {
  return testing::run_command("{ printf '%s' '" + input + "' | " + SEED_BINARY + " tokenize --model " + dir.string() +
                              " " + flags + (with_log ? " 2>&1; }" : " 2>/dev/null; }"));
}

TEST(TokenizeCliTest, EncodesAndDecodesLines) {
  const fs::path dir = write_model_folder();
  EXPECT_EQ(tokenize(dir, "", "\"a ab\"\n\"\"\n").output, "[1,6,6,5]\n[1]\n");
  EXPECT_EQ(tokenize(dir, "--no-special", "\"a ab\"\n").output, "[6,6,5]\n");
  EXPECT_EQ(tokenize(dir, "--decode", "[1,6,6,5,2]\n").output, "\"a ab\"\n");
  EXPECT_EQ(tokenize(dir, "--decode --keep-special", "[1,6,2]\n").output, "\"<s> a</s>\"\n");
  fs::remove_all(dir);
}

TEST(TokenizeCliTest, BadLinesNameTheLine) {
  const fs::path dir = write_model_folder();
  const testing::Outcome not_string = tokenize(dir, "", "\"a\"\n[1]\n", true);
  EXPECT_EQ(not_string.exit_code, 1);
  EXPECT_NE(not_string.output.find("stdin line 2: expected a JSON string"), std::string::npos) << not_string.output;
  const testing::Outcome not_json = tokenize(dir, "--decode", "[1, 2\n", true);
  EXPECT_EQ(not_json.exit_code, 1);
  EXPECT_NE(not_json.output.find("stdin line 1: not valid JSON"), std::string::npos) << not_json.output;
  const testing::Outcome out_of_range = tokenize(dir, "--decode", "[99]\n", true);
  EXPECT_EQ(out_of_range.exit_code, 1);
  EXPECT_NE(out_of_range.output.find("token id 99"), std::string::npos) << out_of_range.output;
  fs::remove_all(dir);
}

TEST(TokenizeCliTest, ChatRendersMessagesWithTheTemplate) {
  const fs::path dir = write_model_folder();
  const testing::Outcome missing = tokenize(dir, "--chat", "[]\n", true);
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.output.find(dir.string() + "/tokenizer_config.json has no chat_template"), std::string::npos)
      << missing.output;
  std::ofstream(dir / "tokenizer_config.json")
      << json{{"bos_token", "<s>"},
              {"add_bos_token", true},
              {"chat_template", "{{ bos_token }}{% for m in messages %}{% if m.role != 'user' %}"
                                "{{ raise_exception('only user turns') }}{% endif %}{{ m.content }}{% endfor %}"
                                "{% if add_generation_prompt %} b{% endif %}"}}
             .dump();
  const std::string messages = R"([{"role": "user", "content": "a"}])";
  EXPECT_EQ(tokenize(dir, "--chat", messages + "\n").output, "\"<s>a b\"\n");
  EXPECT_EQ(tokenize(dir, "--chat --no-generation-prompt", messages + "\n").output, "\"<s>a\"\n");
  // One <s>: the template's (the tokenizer adds none of its own).
  EXPECT_EQ(tokenize(dir, "--chat --chat-ids", messages + "\n").output, "[1,6,3,5]\n");
  const testing::Outcome refused =
      tokenize(dir, "--chat", messages + "\n" + R"([{"role": "system", "content": "x"}])" + "\n", true);
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_NE(refused.output.find("stdin line 2"), std::string::npos) << refused.output;
  EXPECT_NE(refused.output.find("raise_exception: only user turns"), std::string::npos) << refused.output;
  const testing::Outcome not_list = tokenize(dir, "--chat", "\"a\"\n", true);
  EXPECT_EQ(not_list.exit_code, 1);
  EXPECT_NE(not_list.output.find("stdin line 1: expected a JSON list of messages"), std::string::npos)
      << not_list.output;
  fs::remove_all(dir);
}

// --chat-var NAME=JSON: template variables, as apply_chat_template's keyword
// arguments; a later NAME wins, and a malformed one is named with the fix.
TEST(TokenizeCliTest, ChatVarPassesTemplateVariables) {
  const fs::path dir = write_model_folder();
  std::ofstream(dir / "tokenizer_config.json")
      << json{{"bos_token", "<s>"},
              {"chat_template", "{% for m in messages %}{{ m.content }}{% endfor %}"
                                "{% if thinking is defined and thinking is false %} b{% endif %}"
                                "{% if name is defined %} {{ name }}{% endif %}"}}
             .dump();
  const std::string messages = std::string(R"([{"role": "user", "content": "a"}])") + "\n";
  EXPECT_EQ(tokenize(dir, "--chat", messages).output, "\"a\"\n");
  EXPECT_EQ(tokenize(dir, "--chat --chat-var thinking=false", messages).output, "\"a b\"\n");
  EXPECT_EQ(tokenize(dir, "--chat --chat-var thinking=true", messages).output, "\"a\"\n");
  EXPECT_EQ(tokenize(dir, "--chat --chat-var thinking=false --chat-var name='\"ab\"'", messages).output,
            "\"a b ab\"\n");
  EXPECT_EQ(tokenize(dir, "--chat --chat-var thinking=false --chat-var thinking=true", messages).output, "\"a\"\n");
  for (const auto& [flags, message] :
       {std::pair<std::string, std::string>{"--chat-var thinking", "expected NAME=JSON"},
        {"--chat-var name=ab", "the value is not JSON (quote a string: name='\"ab\"')"},
        {"--chat-var 1x=2", "'1x' is not a template variable name"},
        {"--chat-var messages=[]", "the command sets messages itself"}}) {
    const testing::Outcome bad = tokenize(dir, "--chat " + flags, messages, true);
    EXPECT_EQ(bad.exit_code, 1) << flags;
    EXPECT_NE(bad.output.find(message), std::string::npos) << bad.output;
  }
  EXPECT_NE(tokenize(dir, "--chat-var thinking=false", "\"a\"\n", true).exit_code, 0);  // needs --chat
  fs::remove_all(dir);
}

TEST(TokenizeCliTest, MalformedTokenizerJsonNamesFileAndField) {
  const fs::path dir = write_model_folder();
  json broken = json::parse(std::ifstream(dir / "tokenizer.json"));
  broken["model"]["merges"] = {"\u2581 zz"};
  std::ofstream(dir / "tokenizer.json") << broken.dump();
  const testing::Outcome outcome = tokenize(dir, "", "\"a\"\n", true);
  EXPECT_EQ(outcome.exit_code, 1);
  EXPECT_NE(outcome.output.find((dir / "tokenizer.json").string() + ": field 'model.merges[0]'"), std::string::npos)
      << outcome.output;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace seed
