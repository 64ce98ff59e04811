// The tokens a corpus uses most (a draft's reduced vocabulary): counted as
// the model's tokenizer encodes each string, chosen by count, ties and
// unused tokens to the lower id, the model's own special tokens always.
#include "models/frequent_tokens.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <unistd.h>

#include "tests/throws_error.h"

namespace seed::models {
namespace {

namespace fs = std::filesystem;
using ::seed::testing::throws_error;

class FrequentTokensTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tokenizer_ = load_tokenizer(std::string(SEED_ZOO_DIR) + "/tiny-target");
    dir_ = fs::temp_directory_path() / ("seed_frequent_tokens_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text) {
    std::ofstream((dir_ / name).string()) << text;
    return (dir_ / name).string();
  }
  static constexpr int64_t kVocab = 512;
  std::unique_ptr<Tokenizer> tokenizer_;
  fs::path dir_;
};

TEST_F(FrequentTokensTest, CountsEachJsonStringAndEachTextLineAsTheTokenizerEncodesThem) {
  const std::string jsonl = write("a.jsonl",
                                  "{\"question\": \"4 4 6 8\", \"answer\": [\"4 + 8 = 12\", 7]}\n"
                                  "\n"
                                  "{\"q\": \"12 12\"}\n");
  const std::string text = write("b.txt", "left: 12\nleft: 24\n");
  const TokenCounts counts = count_corpus_tokens(*tokenizer_, {jsonl, text}, kVocab);
  std::vector<int64_t> expected(kVocab, 0);
  int64_t total = 0;
  for (const char* s : {"4 4 6 8", "4 + 8 = 12", "12 12", "left: 12\n", "left: 24\n"}) {
    for (const int32_t t : tokenizer_->encode(s, false)) {
      ++expected[static_cast<size_t>(t)];
      ++total;
    }
  }
  EXPECT_EQ(counts.per_token, expected);
  EXPECT_EQ(counts.total, total);
}

TEST_F(FrequentTokensTest, KeepsTheMostFrequentTheAlwaysKeptAndThenTheLowestUnusedIds) {
  const TokenCounts counts = count_corpus_tokens(*tokenizer_, {write("c.txt", "12 12 12 24 24 6\n")}, kVocab);
  std::vector<int64_t> used;
  for (int64_t t = 0; t < kVocab; ++t) {
    if (counts.per_token[static_cast<size_t>(t)] > 0) used.push_back(t);
  }
  // The most frequent token, the always-kept 2, and nothing else.
  const int64_t top = std::max_element(counts.per_token.begin(), counts.per_token.end()) - counts.per_token.begin();
  std::vector<int64_t> expected = {2, top};
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(most_frequent_tokens(counts, 2, {2, 2}, "--size"), expected);
  EXPECT_DOUBLE_EQ(counts.coverage({top}),
                   static_cast<double>(counts.per_token[static_cast<size_t>(top)]) / counts.total);
  // Every used token, then the lowest ids the corpus never uses.
  const std::vector<int64_t> all = most_frequent_tokens(counts, static_cast<int64_t>(used.size()) + 3, {}, "--size");
  std::vector<int64_t> unused_lowest;
  for (int64_t t = 0; unused_lowest.size() < 3; ++t) {
    if (counts.per_token[static_cast<size_t>(t)] == 0) unused_lowest.push_back(t);
  }
  std::vector<int64_t> want = used;
  want.insert(want.end(), unused_lowest.begin(), unused_lowest.end());
  std::sort(want.begin(), want.end());
  EXPECT_EQ(all, want);
  EXPECT_DOUBLE_EQ(counts.coverage(all), 1.0);
}

TEST_F(FrequentTokensTest, BadFilesAndSizesAreErrorsNamingThem) {
  const std::string missing = (dir_ / "none.txt").string();
  EXPECT_TRUE(throws_error([&] { count_corpus_tokens(*tokenizer_, {missing}, kVocab); }, ErrorKind::kNotFound,
                           {missing}));
  const std::string bad = write("bad.jsonl", "{\"q\": \"1\"}\n{\"q\": \n");
  EXPECT_TRUE(throws_error([&] { count_corpus_tokens(*tokenizer_, {bad}, kVocab); }, ErrorKind::kCorruption,
                           {bad + ":2"}));
  // A tokenizer of a larger vocabulary than the model's.
  EXPECT_TRUE(throws_error([&] { count_corpus_tokens(*tokenizer_, {write("d.txt", "24\n")}, 3); },
                           ErrorKind::kInvalidArgument, {"d.txt:1", "vocabulary of 3"}));
  const TokenCounts counts = count_corpus_tokens(*tokenizer_, {write("e.txt", "24\n")}, kVocab);
  EXPECT_TRUE(throws_error([&] { most_frequent_tokens(counts, kVocab + 1, {}, "--size"); },
                           ErrorKind::kInvalidArgument, {"--size is 513", "[0, 512]"}));
  EXPECT_TRUE(throws_error([&] { most_frequent_tokens(counts, 1, {1, 2}, "--size"); }, ErrorKind::kInvalidArgument,
                           {"--size is 1", "[2, 512]"}));
}

}  // namespace
}  // namespace seed::models
