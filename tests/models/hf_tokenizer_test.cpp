// HfTokenizer end to end on small hand-written tokenizer.json files (a
// byte-level BPE as Llama 3 / Qwen have, a byte-fallback BPE as Llama 2 has),
// added-token options, tokenizer_config.json, and malformed files.
#include "models/hf_tokenizer/hf_tokenizer.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "models/hf_tokenizer/byte_level.h"
#include "models/hf_tokenizer/utf8.h"
#include "models/tokenizer.h"
#include "tests/throws_error.h"

namespace seed::models::hf {
namespace {

using json = nlohmann::json;
using Ids = std::vector<int32_t>;
using testing::throws_error;

constexpr const char* kLlama3Regex =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

json added(int id, const std::string& content, bool special, bool lstrip = false, bool rstrip = false) {
  return {{"id", id},         {"content", content}, {"special", special},     {"lstrip", lstrip},
          {"rstrip", rstrip}, {"normalized", false}, {"single_word", false}};
}

// Byte-level BPE: ids 0-255 are the bytes' characters, 256.. the merges'
// results: he, ll, hell, hello, Ġhello. Merges as "a b" or as ["a", "b"].
json byte_level_tokenizer(bool pair_merges) {
  json vocab = json::object();
  for (int b = 0; b < 256; ++b) vocab[byte_level_chars()[b]] = b;
  const std::vector<std::pair<std::string, std::string>> merges = {
      {"h", "e"}, {"l", "l"}, {"he", "ll"}, {"hell", "o"}, {"\u0120", "hello"}};
  json merge_list = json::array();
  for (const auto& [a, b] : merges) {
    vocab[a + b] = static_cast<int>(vocab.size());
    merge_list.push_back(pair_merges ? json::array({a, b}) : json(a + " " + b));
  }
  return {{"version", "1.0"},
          {"added_tokens", {added(261, "<|end|>", true), added(262, "<|bos|>", true), added(263, "[x]", false, true, true)}},
          {"normalizer", nullptr},
          {"pre_tokenizer",
           {{"type", "Sequence"},
            {"pretokenizers",
             {{{"type", "Split"}, {"pattern", {{"Regex", kLlama3Regex}}}, {"behavior", "Isolated"}, {"invert", false}},
              {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", false}}}}}},
          {"post_processor",
           {{"type", "TemplateProcessing"},
            {"single", {{{"SpecialToken", {{"id", "<|bos|>"}, {"type_id", 0}}}}, {{"Sequence", {{"id", "A"}, {"type_id", 0}}}}}},
            {"special_tokens", {{"<|bos|>", {{"id", "<|bos|>"}, {"ids", {262}}, {"tokens", {"<|bos|>"}}}}}}}},
          {"decoder", {{"type", "ByteLevel"}}},
          {"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", merge_list}, {"ignore_merges", false}}}};
}

// Llama-2-style BPE: <unk> <s> </s>, the 256 byte tokens, ▁ h i ▁h ▁hi.
json byte_fallback_tokenizer() {
  json vocab = {{"<unk>", 0}, {"<s>", 1}, {"</s>", 2}};
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof(name), "<0x%02X>", b);
    vocab[name] = 3 + b;
  }
  vocab["\u2581"] = 259;
  vocab["h"] = 260;
  vocab["i"] = 261;
  vocab["\u2581h"] = 262;
  vocab["\u2581hi"] = 263;
  return {{"added_tokens", {added(0, "<unk>", true), added(1, "<s>", true), added(2, "</s>", true)}},
          {"normalizer",
           {{"type", "Sequence"},
            {"normalizers",
             {{{"type", "Prepend"}, {"prepend", "\u2581"}},
              {{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", "\u2581"}}}}}},
          {"pre_tokenizer", nullptr},
          {"post_processor",
           {{"type", "TemplateProcessing"},
            {"single", {{{"SpecialToken", {{"id", "<s>"}, {"type_id", 0}}}}, {{"Sequence", {{"id", "A"}, {"type_id", 0}}}}}},
            {"special_tokens", {{"<s>", {{"id", "<s>"}, {"ids", {1}}, {"tokens", {"<s>"}}}}}}}},
          {"decoder",
           {{"type", "Sequence"},
            {"decoders",
             {{{"type", "Replace"}, {"pattern", {{"String", "\u2581"}}}, {"content", " "}},
              {{"type", "ByteFallback"}},
              {{"type", "Fuse"}},
              {{"type", "Strip"}, {"content", " "}, {"start", 1}, {"stop", 0}}}}}},
          {"model",
           {{"type", "BPE"},
            {"vocab", vocab},
            {"merges", {"\u2581 h", "\u2581h i"}},
            {"unk_token", "<unk>"},
            {"fuse_unk", true},
            {"byte_fallback", true}}}};
}

TEST(HfTokenizerTest, ByteLevelBpeEncodesMergesAndAddedTokens) {
  for (const bool pair_merges : {false, true}) {
    const HfTokenizer tokenizer(byte_level_tokenizer(pair_merges), "tiny.json");
    EXPECT_EQ(tokenizer.encode("hello hello<|end|>", false), (Ids{259, 260, 261}));
    EXPECT_EQ(tokenizer.encode("hello", true), (Ids{262, 259}));
    EXPECT_EQ(tokenizer.encode("h\u00e9", false), (Ids{'h', 0xC3, 0xA9}));
    EXPECT_EQ(tokenizer.encode("", false), Ids{});
    EXPECT_EQ(tokenizer.vocab_size(), 264);
    EXPECT_EQ(tokenizer.bos_id(), 262);
    EXPECT_EQ(tokenizer.added_token_ids(), (Ids{261, 262, 263}));
  }
}

TEST(HfTokenizerTest, ByteLevelDecodeDropsSpecialTokensUnlessAsked) {
  const HfTokenizer tokenizer(byte_level_tokenizer(false), "tiny.json");
  const Ids ids = tokenizer.encode("<|bos|>hello h\u00e9llo\n<|end|>", false);
  EXPECT_EQ(tokenizer.decode(ids), "hello h\u00e9llo\n");
  EXPECT_EQ(tokenizer.decode(ids, /*skip_special=*/false), "<|bos|>hello h\u00e9llo\n<|end|>");
  EXPECT_TRUE(throws_error([&] { tokenizer.decode({264}); }, ErrorKind::kOutOfRange, {"264"}));
}

TEST(HfTokenizerTest, AddedTokenStripsTakeTheWhitespaceBeside) {
  const HfTokenizer tokenizer(byte_level_tokenizer(false), "tiny.json");
  EXPECT_EQ(tokenizer.encode("a  [x] \n b", false), (Ids{'a', 263, 'b'}));
  EXPECT_EQ(tokenizer.encode("a <|end|> b", false), (Ids{'a', ' ', 261, ' ', 'b'}));
}

TEST(HfTokenizerTest, SingleWordTokenMatchesOnlyAsAWord) {
  json config = byte_level_tokenizer(false);
  config["added_tokens"][2]["single_word"] = true;
  const HfTokenizer tokenizer(config, "tiny.json");
  EXPECT_EQ(tokenizer.encode("[x]", false), (Ids{263}));
  EXPECT_EQ(tokenizer.encode("a[x]", false), (Ids{'a', '[', 'x', ']'}));
}

TEST(HfTokenizerTest, ByteFallbackBpeMatchesLlama2Style) {
  const HfTokenizer tokenizer(byte_fallback_tokenizer(), "tiny.json");
  // "▁hi▁hé": é is not in the vocab, so it is its two byte tokens.
  EXPECT_EQ(tokenizer.encode("hi h\u00e9", true), (Ids{1, 263, 262, 3 + 0xC3, 3 + 0xA9}));
  EXPECT_EQ(tokenizer.decode({1, 263, 262, 3 + 0xC3, 3 + 0xA9}), "hi h\u00e9");
  EXPECT_EQ(tokenizer.encode("<s>hi", false), (Ids{1, 263}));
  EXPECT_EQ(tokenizer.bos_id(), 1);
  EXPECT_EQ(tokenizer.eos_id(), -1);
}

TEST(HfTokenizerTest, ConfigNamesBosEosAndDecidesSpecialTokens) {
  TokenizerConfig config;
  config.bos_token = "<s>";
  config.eos_token = "</s>";
  config.add_bos_token = true;
  config.add_eos_token = true;
  const HfTokenizer tokenizer(byte_fallback_tokenizer(), "tiny.json", config);
  EXPECT_EQ(tokenizer.bos_id(), 1);
  EXPECT_EQ(tokenizer.eos_id(), 2);
  EXPECT_EQ(tokenizer.encode("hi", true), (Ids{1, 263, 2}));
  config.bos_token = "<nope>";
  EXPECT_TRUE(throws_error([&] { HfTokenizer(byte_fallback_tokenizer(), "tiny.json", config); },
                           ErrorKind::kInvalidArgument, {"bos_token", "<nope>"}));
}

TEST(HfTokenizerTest, ConfigFileReadsTokensAsStringsOrObjects) {
  const json file = {{"bos_token", {{"__type", "AddedToken"}, {"content", "<s>"}}},
                     {"eos_token", "</s>"},
                     {"pad_token", nullptr},
                     {"add_bos_token", false},
                     {"chat_template", "{{ messages }}"}};
  const TokenizerConfig config = TokenizerConfig::from_json(file, "tokenizer_config.json");
  EXPECT_EQ(config.bos_token, "<s>");
  EXPECT_EQ(config.eos_token, "</s>");
  EXPECT_EQ(config.pad_token, "");
  EXPECT_EQ(config.add_bos_token, std::optional<bool>(false));
  EXPECT_FALSE(config.add_eos_token.has_value());
  EXPECT_EQ(config.chat_template, "{{ messages }}");
  EXPECT_TRUE(throws_error([&] { TokenizerConfig::from_json({{"add_bos_token", "yes"}}, "cfg.json"); },
                           ErrorKind::kInvalidArgument, {"cfg.json", "add_bos_token"}));
}

TEST(HfTokenizerTest, InvalidUtf8TextIsInvalidArgument) {
  const HfTokenizer tokenizer(byte_level_tokenizer(false), "tiny.json");
  EXPECT_TRUE(throws_error([&] { tokenizer.encode("a\xff", false); }, ErrorKind::kInvalidArgument, {"UTF-8"}));
}

TEST(HfTokenizerMalformedTest, ErrorsNameTheFileAndField) {
  json no_model = byte_level_tokenizer(false);
  no_model.erase("model");
  EXPECT_TRUE(throws_error([&] { HfTokenizer(no_model, "dir/tokenizer.json"); }, ErrorKind::kInvalidArgument,
                           {"dir/tokenizer.json", "'model'", "missing"}));

  json one_token_merge = byte_level_tokenizer(false);
  one_token_merge["model"]["merges"][1] = "ll";
  EXPECT_TRUE(throws_error([&] { HfTokenizer(one_token_merge, "t.json"); }, ErrorKind::kInvalidArgument,
                           {"t.json", "'model.merges[1]'"}));

  json unknown_part = byte_level_tokenizer(false);
  unknown_part["model"]["merges"][0] = "h zz";
  EXPECT_TRUE(throws_error([&] { HfTokenizer(unknown_part, "t.json"); }, ErrorKind::kInvalidArgument,
                           {"'model.merges[0]'", "\"zz\" is not in model.vocab"}));

  json bad_regex = byte_level_tokenizer(false);
  bad_regex["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"] = "(\\p{L}+";
  EXPECT_TRUE(throws_error([&] { HfTokenizer(bad_regex, "t.json"); }, ErrorKind::kInvalidArgument,
                           {"'pre_tokenizer.pretokenizers[0].pattern.Regex'", "invalid regex at offset"}));

  json unknown_type = byte_level_tokenizer(false);
  unknown_type["normalizer"] = {{"type", "Precompiled"}};
  EXPECT_TRUE(throws_error([&] { HfTokenizer(unknown_type, "t.json"); }, ErrorKind::kInvalidArgument,
                           {"'normalizer.type'", "Precompiled", "not supported"}));

  json bad_template = byte_level_tokenizer(false);
  bad_template["post_processor"]["special_tokens"] = json::object();
  EXPECT_TRUE(throws_error([&] { HfTokenizer(bad_template, "t.json"); }, ErrorKind::kInvalidArgument,
                           {"'post_processor.single[0]'", "<|bos|>"}));

  json bad_added = byte_level_tokenizer(false);
  bad_added["added_tokens"][1].erase("id");
  EXPECT_TRUE(throws_error([&] { HfTokenizer(bad_added, "t.json"); }, ErrorKind::kInvalidArgument,
                           {"'added_tokens[1].id'"}));

  // Found by fuzzing: one id near 2^31 made the vocabulary allocate gigabytes.
  json huge_id = byte_level_tokenizer(false);
  huge_id["model"]["vocab"]["zz"] = 1 << 30;
  EXPECT_TRUE(throws_error([&] { HfTokenizer(huge_id, "t.json"); }, ErrorKind::kInvalidArgument,
                           {"'model.vocab'", "\"zz\"", "[0, 4194304)"}));
  json huge_added = byte_level_tokenizer(false);
  huge_added["added_tokens"][0]["id"] = 1 << 30;
  EXPECT_TRUE(throws_error([&] { HfTokenizer(huge_added, "t.json"); }, ErrorKind::kInvalidArgument,
                           {"'added_tokens[0].id'", "[0, 4194304)"}));
}

TEST(HfTokenizerMalformedTest, LoadTokenizerReadsAFolderWithTokenizerJson) {
  const std::filesystem::path dir =
      std::filesystem::path(::testing::TempDir()) / ("hf_folder_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "tokenizer.json") << byte_fallback_tokenizer().dump();
  std::ofstream(dir / "tokenizer_config.json") << json{{"eos_token", "</s>"}}.dump();
  const auto tokenizer = load_tokenizer(dir.string());
  EXPECT_EQ(tokenizer->encode("hi", true), (Ids{1, 263}));
  EXPECT_EQ(tokenizer->eos_id(), 2);
  std::ofstream(dir / "tokenizer.json") << "{ not json";
  EXPECT_TRUE(throws_error([&] { load_tokenizer(dir.string()); }, ErrorKind::kCorruption, {"tokenizer.json"}));
  std::filesystem::remove_all(dir);
}

TEST(HfTokenizerTest, StreamingAByteLevelSequenceConcatenatesToDecode) {
  const HfTokenizer tokenizer(byte_level_tokenizer(false), "tiny.json");
  // Byte tokens of multi-byte characters arrive one at a time.
  const std::string text = "hello h\u00e9llo \u4f60\u597d\U0001f600 hello<|end|> hello";
  const Ids ids = tokenizer.encode(text, true);
  TextStream stream(tokenizer);
  std::string streamed;
  for (const int32_t id : ids) {
    const std::string piece = stream.push(id);
    EXPECT_TRUE(utf8_valid(piece)) << "a push returned part of a character";
    streamed += piece;
  }
  streamed += stream.finish();
  EXPECT_EQ(streamed, tokenizer.decode(ids));
  EXPECT_EQ(streamed, "hello h\u00e9llo \u4f60\u597d\U0001f600 hello hello");
}

}  // namespace
}  // namespace seed::models::hf
