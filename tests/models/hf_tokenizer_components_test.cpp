// tokenizer.json components on hand-made cases: each normalizer,
// pre-tokenizer (and split behaviour), decoder and post-processor.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "models/hf_tokenizer/decoders.h"
#include "models/hf_tokenizer/normalizers.h"
#include "models/hf_tokenizer/post_processors.h"
#include "models/hf_tokenizer/pre_tokenizers.h"

namespace seed::models::hf {
namespace {

using json = nlohmann::json;
using Strings = std::vector<std::string>;

const Field kField{"test.json", "component"};

std::string normalize(const json& config, const std::string& text) { return make_normalizer(config, kField)->normalize(text); }

Strings pre_tokenize(const json& config, const std::string& text, bool at_start = true) {
  Strings pieces{text};
  make_pre_tokenizer(config, kField)->split(&pieces, at_start);
  return pieces;
}

Strings decode(const json& config, Strings tokens) { return make_decoder(config, kField)->decode_chain(std::move(tokens)); }

TEST(HfNormalizerTest, UnicodeForms) {
  EXPECT_EQ(normalize({{"type", "NFC"}}, "e\u0301"), "\u00e9");
  EXPECT_EQ(normalize({{"type", "NFD"}}, "\u00e9"), "e\u0301");
  EXPECT_EQ(normalize({{"type", "NFKC"}}, "\ufb01 \u2460"), "fi 1");
  EXPECT_EQ(normalize({{"type", "NFKD"}}, "\u00bd"), "1\u20442");
}

TEST(HfNormalizerTest, LowercasePrependReplaceStrip) {
  EXPECT_EQ(normalize({{"type", "Lowercase"}}, "\u00c0BC \u03a3"), "\u00e0bc \u03c3");
  EXPECT_EQ(normalize({{"type", "Prepend"}, {"prepend", "\u2581"}}, "a"), "\u2581a");
  EXPECT_EQ(normalize({{"type", "Prepend"}, {"prepend", "\u2581"}}, ""), "");
  EXPECT_EQ(normalize({{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", "\u2581"}}, " a b"),
            "\u2581a\u2581b");
  EXPECT_EQ(normalize({{"type", "Replace"}, {"pattern", {{"Regex", " {2,}"}}}, {"content", " "}}, "a    b  c"), "a b c");
  EXPECT_EQ(normalize({{"type", "Strip"}, {"strip_left", true}, {"strip_right", false}}, " \u3000a "), "a ");
  EXPECT_EQ(normalize({{"type", "Strip"}}, "\t a \n"), "a");
}

TEST(HfNormalizerTest, StripAccentsAndSequence) {
  const json sequence = {{"type", "Sequence"},
                         {"normalizers", {{{"type", "NFD"}}, {{"type", "StripAccents"}}, {{"type", "Lowercase"}}}}};
  EXPECT_EQ(normalize(sequence, "Cr\u00e8me Br\u00fbl\u00e9e"), "creme brulee");
}

TEST(HfPreTokenizerTest, Llama3Split) {
  const json split = {{"type", "Split"},
                      {"pattern",
                       {{"Regex",
                         R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)"}}},
                      {"behavior", "Isolated"},
                      {"invert", false}};
  EXPECT_EQ(pre_tokenize(split, "Hello WORLD'S 1234567  x\n\n"),
            (Strings{"Hello", " WORLD", "'S", " ", "123", "456", "7", " ", " x", "\n\n"}));
  EXPECT_EQ(pre_tokenize(split, "\u4f60\u597d, \u043c\u0438\u0440!"), (Strings{"\u4f60\u597d", ",", " \u043c\u0438\u0440", "!"}));
}

TEST(HfPreTokenizerTest, SplitBehaviors) {
  const auto split = [](const std::string& behavior, bool invert = false) {
    return pre_tokenize({{"type", "Split"}, {"pattern", {{"String", "-"}}}, {"behavior", behavior}, {"invert", invert}},
                        "the-final--countdown");
  };
  EXPECT_EQ(split("Removed"), (Strings{"the", "final", "countdown"}));
  EXPECT_EQ(split("Isolated"), (Strings{"the", "-", "final", "-", "-", "countdown"}));
  EXPECT_EQ(split("MergedWithPrevious"), (Strings{"the-", "final-", "-", "countdown"}));
  EXPECT_EQ(split("MergedWithNext"), (Strings{"the", "-final", "-", "-countdown"}));
  EXPECT_EQ(split("Contiguous"), (Strings{"the", "-", "final", "--", "countdown"}));
  EXPECT_EQ(split("Removed", true), (Strings{"-", "-", "-"}));
}

TEST(HfPreTokenizerTest, ByteLevel) {
  const json plain = {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", false}};
  EXPECT_EQ(pre_tokenize(plain, " h\u00e9\n"), (Strings{"\u0120h\u00c3\u00a9\u010a"}));
  const json gpt2 = {{"type", "ByteLevel"}, {"add_prefix_space", true}, {"use_regex", true}};
  EXPECT_EQ(pre_tokenize(gpt2, "Hello world's  end"),
            (Strings{"\u0120Hello", "\u0120world", "'s", "\u0120", "\u0120end"}));
}

TEST(HfPreTokenizerTest, Metaspace) {
  const json always = {{"type", "Metaspace"}, {"replacement", "\u2581"}, {"prepend_scheme", "always"}, {"split", true}};
  EXPECT_EQ(pre_tokenize(always, "Hey  friend"), (Strings{"\u2581Hey", "\u2581", "\u2581friend"}));
  const json first = {{"type", "Metaspace"}, {"replacement", "\u2581"}, {"prepend_scheme", "first"}, {"split", false}};
  EXPECT_EQ(pre_tokenize(first, "a b", /*at_start=*/true), (Strings{"\u2581a\u2581b"}));
  EXPECT_EQ(pre_tokenize(first, "a b", /*at_start=*/false), (Strings{"a\u2581b"}));
  const json legacy = {{"type", "Metaspace"}, {"replacement", "\u2581"}, {"add_prefix_space", false}};
  EXPECT_EQ(pre_tokenize(legacy, "a b"), (Strings{"a", "\u2581b"}));
}

TEST(HfPreTokenizerTest, DigitsPunctuationWhitespace) {
  EXPECT_EQ(pre_tokenize({{"type", "Digits"}, {"individual_digits", true}}, "ab12c3"),
            (Strings{"ab", "1", "2", "c", "3"}));
  EXPECT_EQ(pre_tokenize({{"type", "Digits"}, {"individual_digits", false}}, "ab12c3"), (Strings{"ab", "12", "c", "3"}));
  EXPECT_EQ(pre_tokenize({{"type", "Punctuation"}}, "Hey, you!\u00bf"), (Strings{"Hey", ",", " you", "!", "\u00bf"}));
  EXPECT_EQ(pre_tokenize({{"type", "WhitespaceSplit"}}, " a\tb\u3000 c "), (Strings{"a", "b", "c"}));
  EXPECT_EQ(pre_tokenize({{"type", "Whitespace"}}, "Hey man!!  ok?"), (Strings{"Hey", "man", "!!", "ok", "?"}));
  const json sequence = {{"type", "Sequence"},
                         {"pretokenizers", {{{"type", "WhitespaceSplit"}}, {{"type", "Digits"}, {"individual_digits", true}}}}};
  EXPECT_EQ(pre_tokenize(sequence, "x12 y"), (Strings{"x", "1", "2", "y"}));
}

TEST(HfDecoderTest, ByteLevel) {
  EXPECT_EQ(decode({{"type", "ByteLevel"}}, {"\u0120hello", "\u0120w\u00c3\u00a9", "ld"}), (Strings{" hello w\u00e9ld"}));
  // A character cut in half decodes to U+FFFD; an added token keeps its text.
  EXPECT_EQ(decode({{"type", "ByteLevel"}}, {"a\u00c3", "<\uff5cUser\uff5c>"}), (Strings{"a\ufffd<\uff5cUser\uff5c>"}));
}

TEST(HfDecoderTest, ByteFallbackFuseStripReplace) {
  EXPECT_EQ(decode({{"type", "ByteFallback"}}, {"<0xE2>", "<0x96>", "<0x81>", "a", "<0xE2>", "b"}),
            (Strings{"\u2581", "a", "\ufffd", "b"}));
  EXPECT_EQ(decode({{"type", "Fuse"}}, {"a", "b", "c"}), (Strings{"abc"}));
  EXPECT_EQ(decode({{"type", "Strip"}, {"content", " "}, {"start", 1}, {"stop", 0}}, {"  a ", "b"}), (Strings{" a ", "b"}));
  EXPECT_EQ(decode({{"type", "Replace"}, {"pattern", {{"String", "\u2581"}}}, {"content", " "}}, {"\u2581a\u2581"}),
            (Strings{" a "}));
  const json llama2 = {{"type", "Sequence"},
                       {"decoders",
                        {{{"type", "Replace"}, {"pattern", {{"String", "\u2581"}}}, {"content", " "}},
                         {{"type", "ByteFallback"}},
                         {{"type", "Fuse"}},
                         {{"type", "Strip"}, {"content", " "}, {"start", 1}, {"stop", 0}}}}};
  EXPECT_EQ(decode(llama2, {"\u2581Hello", "\u2581w", "<0xC3>", "<0xA9>"}), (Strings{"Hello w\u00e9"}));
}

TEST(HfDecoderTest, Metaspace) {
  const json always = {{"type", "Metaspace"}, {"replacement", "\u2581"}, {"prepend_scheme", "always"}};
  EXPECT_EQ(decode(always, {"\u2581Hey", "\u2581friend"}), (Strings{"Hey", " friend"}));
  const json never = {{"type", "Metaspace"}, {"replacement", "\u2581"}, {"prepend_scheme", "never"}};
  EXPECT_EQ(decode(never, {"\u2581Hey"}), (Strings{" Hey"}));
}

TEST(HfPostProcessorTest, TemplateByteLevelSequence) {
  const json templ = {{"type", "TemplateProcessing"},
                      {"single",
                       {{{"SpecialToken", {{"id", "<s>"}, {"type_id", 0}}}},
                        {{"Sequence", {{"id", "A"}, {"type_id", 0}}}},
                        {{"SpecialToken", {{"id", "</s>"}, {"type_id", 0}}}}}},
                      {"special_tokens",
                       {{"<s>", {{"id", "<s>"}, {"ids", {1}}, {"tokens", {"<s>"}}}},
                        {"</s>", {{"id", "</s>"}, {"ids", {2}}, {"tokens", {"</s>"}}}}}}};
  std::vector<int32_t> ids = {7, 8};
  make_post_processor(templ, kField)->add_special_tokens(&ids);
  EXPECT_EQ(ids, (std::vector<int32_t>{1, 7, 8, 2}));
  ids = {7};
  make_post_processor({{"type", "ByteLevel"}, {"trim_offsets", false}}, kField)->add_special_tokens(&ids);
  EXPECT_EQ(ids, (std::vector<int32_t>{7}));
  const json sequence = {{"type", "Sequence"}, {"processors", {{{"type", "ByteLevel"}}, templ}}};
  make_post_processor(sequence, kField)->add_special_tokens(&ids);
  EXPECT_EQ(ids, (std::vector<int32_t>{1, 7, 2}));
}

}  // namespace
}  // namespace seed::models::hf
