// SentencePiece tokenizer, trained once per suite on Game-of-24-like text:
// round trips, digit splitting, special ids, load errors and streaming.
#include "models/tokenizer.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "models/base/error.h"

namespace seed::models {
namespace {

namespace fs = std::filesystem;

constexpr int kVocabSize = 384;
constexpr int kCorpusLines = 4000;

// What a Game-of-24 transcript looks like: steps, verdicts, prose.
std::vector<std::string> game_of_24_corpus() {
  const std::vector<std::string> words = {
      "the",  "numbers", "left",  "answer", "we",    "can",      "reach", "twenty",
      "four", "with",    "these", "try",    "again", "evaluate", "if",    "given",
      "use",  "each",    "once",  "input",  "steps", "possible", "value", "too",
      "big",  "small",   "all",   "at",     "most",  "close",    "to",    "so"};
  const std::vector<std::string> verdicts = {"sure", "likely", "impossible"};
  const std::vector<std::string> ops = {"+", "-", "*", "/"};
  std::mt19937 rng(24);
  const auto number = [&rng] { return std::to_string(1 + rng() % 13); };
  std::vector<std::string> lines;
  for (int i = 0; i < kCorpusLines; ++i) {
    std::string line;
    switch (i % 3) {
      case 0:
        line = number() + " " + ops[rng() % 4] + " " + number() + " = " + number() +
               " (left: " + number() + " " + number() + " " + number() + ")";
        break;
      case 1:
        line = verdicts[rng() % verdicts.size()];
        break;
      default:
        for (int w = 0, n = 3 + static_cast<int>(rng() % 8); w < n; ++w) {
          line += (w ? " " : "") + words[rng() % words.size()];
        }
        line += ".";
    }
    lines.push_back(line);
  }
  return lines;
}

// Structural UTF-8 check: lead bytes followed by the right continuations.
bool is_valid_utf8(const std::string& text) {
  for (size_t i = 0; i < text.size();) {
    const auto byte = static_cast<unsigned char>(text[i]);
    const size_t length = byte < 0x80           ? 1
                          : (byte >> 5) == 0x6  ? 2
                          : (byte >> 4) == 0xE  ? 3
                          : (byte >> 3) == 0x1E ? 4
                                                : 0;
    if (length == 0 || i + length > text.size()) return false;
    for (size_t j = 1; j < length; ++j) {
      if ((static_cast<unsigned char>(text[i + j]) & 0xC0) != 0x80) return false;
    }
    i += length;
  }
  return true;
}

template <typename Fn>
Error error_of(Fn&& fn) {
  try {
    fn();
  } catch (const Error& error) {
    return error;
  }
  return Error(ErrorKind::kInternal, "(no error thrown)");
}

class TokenizerTest : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    root_ = fs::temp_directory_path() / ("seed_tokenizer_test_" + std::to_string(::getpid()));
    fs::create_directories(model_dir());
    train_sentencepiece(game_of_24_corpus(), kVocabSize,
                        (model_dir() / "tokenizer.model").string());
    tokenizer_ = load_tokenizer(model_dir().string());
  }
  static void TearDownTestSuite() {
    tokenizer_.reset();
    fs::remove_all(root_);
  }

  static fs::path model_dir() { return root_ / "model"; }
  // A fresh empty folder under the suite's temp dir.
  static fs::path empty_dir(const std::string& name) {
    const fs::path dir = root_ / name;
    fs::create_directories(dir);
    return dir;
  }
  static void write_file(const fs::path& path, const std::string& bytes) {
    std::ofstream(path, std::ios::binary) << bytes;
  }

  // Streams `ids` and checks the increments against a whole decode.
  static void expect_stream_matches_decode(const std::vector<int32_t>& ids) {
    TextStream stream(*tokenizer_);
    std::string streamed;
    for (const int32_t id : ids) {
      const std::string piece = stream.push(id);
      EXPECT_TRUE(is_valid_utf8(piece)) << "push(" << id << ") returned invalid UTF-8";
      streamed += piece;
    }
    streamed += stream.finish();
    EXPECT_EQ(streamed, tokenizer_->decode(ids));
  }

  static inline fs::path root_;  // temp dir of the suite, removed at its end
  static inline std::unique_ptr<Tokenizer> tokenizer_;
};

TEST_F(TokenizerTest, HasRequestedVocabAndLlamaSpecialIds) {
  EXPECT_EQ(tokenizer_->vocab_size(), kVocabSize);
  EXPECT_EQ(tokenizer_->bos_id(), 1);
  EXPECT_EQ(tokenizer_->eos_id(), 2);
}

TEST_F(TokenizerTest, RoundTripsVariedText) {
  for (const std::string text :
       {"4 + 9 = 13 (left: 6 10 13)", "sure", "impossible", "the answer is 24.", "",
        " leading space", "  two  spaces\tand a tab\nand a newline ", "é 😀", "中文 ∑ x² ünïcödé",
        "unseen words: zebra quokka!?"}) {
    EXPECT_EQ(tokenizer_->decode(tokenizer_->encode(text, false)), text);
  }
}

TEST_F(TokenizerTest, UnseenCharactersFallBackToBytesNotUnknown) {
  const auto ids = tokenizer_->encode("é 😀", false);
  for (const int32_t id : ids) EXPECT_NE(id, 0) << "unk in the encoding of unseen characters";
}

TEST_F(TokenizerTest, SplitsDigitsOnePerToken) {
  const std::string text = "12345 + 678 = 13023";
  int digit_tokens = 0;
  for (const int32_t id : tokenizer_->encode(text, false)) {
    int digits = 0;
    for (const char c : tokenizer_->decode({id})) {
      digits += std::isdigit(static_cast<unsigned char>(c)) != 0;
    }
    EXPECT_LE(digits, 1) << "token " << id << " holds several digits";
    digit_tokens += digits;
  }
  EXPECT_EQ(digit_tokens, 13);
}

TEST_F(TokenizerTest, AddBosPrependsBosAndControlTokensDecodeToNothing) {
  const std::string text = "4 * 6 = 24";
  const auto without = tokenizer_->encode(text, false);
  const auto with = tokenizer_->encode(text, true);
  ASSERT_EQ(with.size(), without.size() + 1);
  EXPECT_EQ(with[0], 1);
  EXPECT_EQ(std::vector<int32_t>(with.begin() + 1, with.end()), without);
  auto with_eos = with;
  with_eos.push_back(tokenizer_->eos_id());
  EXPECT_EQ(tokenizer_->decode(with), text);
  EXPECT_EQ(tokenizer_->decode(with_eos), text);
}

TEST_F(TokenizerTest, DecodeRejectsIdsOutsideVocab) {
  EXPECT_EQ(error_of([] { tokenizer_->decode({5, kVocabSize}); }).kind(), ErrorKind::kOutOfRange);
  EXPECT_EQ(error_of([] { tokenizer_->decode({-1}); }).kind(), ErrorKind::kOutOfRange);
}

TEST_F(TokenizerTest, LoadFromMissingFolderIsNotFoundNamingIt) {
  const std::string missing = (root_ / "no_such_model").string();
  const Error error = error_of([&] { load_tokenizer(missing); });
  EXPECT_EQ(error.kind(), ErrorKind::kNotFound);
  EXPECT_NE(std::string(error.what()).find(missing), std::string::npos) << error.what();
}

TEST_F(TokenizerTest, LoadFromFolderWithoutTokenizerIsNotFoundListingFiles) {
  const std::string dir = empty_dir("no_tokenizer").string();
  const Error error = error_of([&] { load_tokenizer(dir); });
  EXPECT_EQ(error.kind(), ErrorKind::kNotFound);
  const std::string message = error.what();
  EXPECT_NE(message.find(dir), std::string::npos) << message;
  EXPECT_NE(message.find("tokenizer.model"), std::string::npos) << message;
  EXPECT_NE(message.find("tokenizer.json"), std::string::npos) << message;
}

TEST_F(TokenizerTest, LoadGarbageModelIsCorruptionNamingFile) {
  const fs::path dir = empty_dir("garbage");
  write_file(dir / "tokenizer.model", "this is not a protobuf \x01\x02\xff\xfe");
  const Error error = error_of([&] { load_tokenizer(dir.string()); });
  EXPECT_EQ(error.kind(), ErrorKind::kCorruption);
  EXPECT_NE(std::string(error.what()).find((dir / "tokenizer.model").string()), std::string::npos)
      << error.what();
}

// Found by fuzzing: a model whose pieces include an empty one passes the
// library's parser and made its trie builder throw its own exception.
TEST_F(TokenizerTest, AModelWithAnEmptyPieceIsCorruptionNamingFile) {
  const fs::path dir = empty_dir("empty_piece");
  const char bytes[] = "\x0a\x0e\x0a\x05<unk>\x15\x00\x00\x00\x00\x18\x02"
                       "\x0a\x0c\x0a\x0a\x00\x00\x18\x02\x0a\x0c\x0a>\x03<";
  write_file(dir / "tokenizer.model", std::string(bytes, sizeof(bytes) - 1));
  const Error error = error_of([&] { load_tokenizer(dir.string()); });
  EXPECT_EQ(error.kind(), ErrorKind::kCorruption);
  EXPECT_NE(std::string(error.what()).find((dir / "tokenizer.model").string()), std::string::npos)
      << error.what();
}

TEST_F(TokenizerTest, LoadTokenizerJsonWithoutModelIsInvalidArgumentNamingField) {
  const fs::path dir = empty_dir("hf_only");
  write_file(dir / "tokenizer.json", "{}");
  const Error error = error_of([&] { load_tokenizer(dir.string()); });
  EXPECT_EQ(error.kind(), ErrorKind::kInvalidArgument);
  EXPECT_NE(std::string(error.what()).find("tokenizer.json"), std::string::npos) << error.what();
  EXPECT_NE(std::string(error.what()).find("'model'"), std::string::npos) << error.what();
}

TEST_F(TokenizerTest, StreamConcatenationEqualsDecode) {
  std::string long_text;
  for (int i = 0; i < 40; ++i) long_text += "8 / 4 = 2 (left: 2 3 4) sure. ";
  for (const std::string& text : std::vector<std::string>{
           "4 + 9 = 13 (left: 6 10 13)", " leading and trailing spaces  ", "line one\nline two",
           "é 😀 ünïcödé 中文", "😀😀😀", long_text + "😀 é", "impossible"}) {
    SCOPED_TRACE(text);
    expect_stream_matches_decode(tokenizer_->encode(text, true));
    expect_stream_matches_decode(tokenizer_->encode(text, false));
  }
}

TEST_F(TokenizerTest, StreamHoldsBackCharacterSplitAcrossByteTokens) {
  const auto ids = tokenizer_->encode("😀", false);
  ASSERT_GE(ids.size(), 4u) << "expected the emoji as byte-fallback tokens";
  TextStream stream(*tokenizer_);
  std::string streamed;
  for (size_t i = 0; i + 1 < ids.size(); ++i) streamed += stream.push(ids[i]);
  EXPECT_EQ(streamed.find("\xEF\xBF\xBD"), std::string::npos) << "emitted a replacement char";
  streamed += stream.push(ids.back());
  EXPECT_EQ(streamed + stream.finish(), "😀");
}

TEST_F(TokenizerTest, StreamOfArbitraryTokensMatchesDecode) {
  // Random ids mix byte tokens, orphan continuation bytes and whitespace
  // pieces in every order, with control tokens and a lone space piece made
  // frequent (they decide where the leading space is dropped); long enough
  // that the stream compacts its window many times.
  const std::vector<int32_t> tricky = {tokenizer_->bos_id(), tokenizer_->eos_id(),
                                       tokenizer_->encode(" ", false).back()};
  std::mt19937 rng(5);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<int32_t> ids(150);
    for (int32_t& id : ids) {
      id =
          rng() % 4 == 0 ? tricky[rng() % tricky.size()] : static_cast<int32_t>(rng() % kVocabSize);
    }
    expect_stream_matches_decode(ids);
  }
}

TEST_F(TokenizerTest, StreamRejectsIdOutsideVocabAndCarriesOn) {
  TextStream stream(*tokenizer_);
  std::string streamed;
  const auto ids = tokenizer_->encode("4 + 9 = 13", false);
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i == 2) {
      EXPECT_EQ(error_of([&] { stream.push(kVocabSize); }).kind(), ErrorKind::kOutOfRange);
    }
    streamed += stream.push(ids[i]);
  }
  EXPECT_EQ(streamed + stream.finish(), "4 + 9 = 13");
}

TEST_F(TokenizerTest, FinishResetsTheStream) {
  TextStream stream(*tokenizer_);
  std::string first;
  for (const int32_t id : tokenizer_->encode("sure", false)) first += stream.push(id);
  EXPECT_EQ(first + stream.finish(), "sure");
  std::string second;
  for (const int32_t id : tokenizer_->encode("likely", false)) second += stream.push(id);
  EXPECT_EQ(second + stream.finish(), "likely");
}

TEST_F(TokenizerTest, TrainingIsDeterministic) {
  const fs::path again = empty_dir("again") / "tokenizer.model";
  train_sentencepiece(game_of_24_corpus(), kVocabSize, again.string());
  const auto bytes_of = [](const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  EXPECT_EQ(bytes_of(again), bytes_of(model_dir() / "tokenizer.model"));
}

TEST_F(TokenizerTest, TrainOnTooSmallCorpusIsInvalidArgument) {
  const fs::path path = empty_dir("small") / "tokenizer.model";
  const Error error = error_of([&] {
    train_sentencepiece({"4 + 9 = 13", "sure"}, 1000, path.string());
  });
  EXPECT_EQ(error.kind(), ErrorKind::kInvalidArgument);
  EXPECT_NE(std::string(error.what()).find("vocab_size"), std::string::npos) << error.what();
  EXPECT_FALSE(fs::exists(path));
  EXPECT_EQ(error_of([&] { train_sentencepiece({}, 300, path.string()); }).kind(),
            ErrorKind::kInvalidArgument);
}

}  // namespace
}  // namespace seed::models
