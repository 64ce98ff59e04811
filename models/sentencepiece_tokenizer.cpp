// SentencePiece tokenizer (libsentencepiece) and its trainer, built as the
// plugin libseed_sentencepiece.so (see sentencepiece_tokenizer.h for why).
#include "models/sentencepiece_tokenizer.h"

#include <cstdint>
#include <sentencepiece_processor.h>
#include <sentencepiece_trainer.h>

#include <filesystem>
#include <string_view>
#include <type_traits>
#include <unordered_map>

#include "models/base/atomic_file.h"
#include "models/base/error.h"

// Exported by libsentencepiece, not declared in its public headers.
namespace sentencepiece::logging {
void SetMinLogLevel(int level);
}  // namespace sentencepiece::logging

namespace seed::models {

// libsentencepiece logs to std::cerr. Opened with RTLD_DEEPBIND, it would
// reach libstdc++'s own std::cerr, which is never constructed when the
// executable holds the (copy-relocated) live one, and crash. So its logging
// is off (levels run INFO 0 .. FATAL 3); its errors reach us as statuses,
// which become seed::Error.
constexpr int kSilent = 4;

namespace {

// libsentencepiece speaks std::vector<int>; ours are the same type.
static_assert(std::is_same_v<int32_t, int>, "token ids are passed to libsentencepiece as int");

class SentencePieceTokenizer : public Tokenizer {
 public:
  explicit SentencePieceTokenizer(const std::string& model_path) : path_(model_path) {
    SEED_CHECK(std::filesystem::is_regular_file(model_path), kNotFound)
        << "SentencePiece model " << model_path << " does not exist (or is not a file)";
    sentencepiece::util::Status status;
    try {
      status = processor_.Load(model_path);
    } catch (const std::exception& e) {
      // Some malformed models get past the parser and make the library's
      // own builders throw (an empty piece: darts "zero-length key").
      SEED_FAIL(kCorruption) << "cannot parse SentencePiece model " << model_path << ": " << e.what();
    }
    SEED_CHECK(status.ok(), kCorruption)
        << "cannot parse SentencePiece model " << model_path << ": " << status.ToString();
  }

  std::vector<int32_t> encode(std::string_view text, bool add_bos) const override {
    std::vector<int32_t> ids;
    if (add_bos) {
      SEED_CHECK(bos_id() >= 0, kInvalidArgument)
          << "add_bos requested but " << path_ << " defines no bos token";
      ids.push_back(bos_id());
    }
    std::vector<int32_t> body;
    const auto status = processor_.Encode(text, &body);
    SEED_CHECK(status.ok(), kInternal) << "SentencePiece encode failed: " << status.ToString();
    ids.insert(ids.end(), body.begin(), body.end());
    return ids;
  }

  std::string decode(const std::vector<int32_t>& ids) const override {
    const int64_t vocab = vocab_size();
    for (const int32_t id : ids) {
      SEED_CHECK(id >= 0 && id < vocab, kOutOfRange)
          << "token id " << id << " is outside the vocabulary [0, " << vocab << ") of " << path_;
    }
    std::string text;
    const auto status = processor_.Decode(ids, &text);
    SEED_CHECK(status.ok(), kInternal) << "SentencePiece decode failed: " << status.ToString();
    return text;
  }

  int64_t vocab_size() const override { return processor_.GetPieceSize(); }
  int32_t bos_id() const override { return processor_.bos_id(); }
  int32_t eos_id() const override { return processor_.eos_id(); }

 private:
  std::string path_;
  sentencepiece::SentencePieceProcessor processor_;
};

// Feeds the in-memory corpus to the trainer, which otherwise reads files.
class VectorSentenceIterator : public sentencepiece::SentenceIterator {
 public:
  // `sentences` must outlive the iterator.
  explicit VectorSentenceIterator(const std::vector<std::string>& sentences)
      : sentences_(sentences) {}
  bool done() const override { return next_ >= sentences_.size(); }
  void Next() override { ++next_; }
  const std::string& value() const override { return sentences_[next_]; }
  sentencepiece::util::Status status() const override { return {}; }

 private:
  const std::vector<std::string>& sentences_;
  size_t next_ = 0;
};

}  // namespace

}  // namespace seed::models

// The plugin's entry points (sentencepiece_tokenizer.h).
seed::models::Tokenizer* seed_sentencepiece_load(const char* model_path) {
  sentencepiece::logging::SetMinLogLevel(seed::models::kSilent);
  return new seed::models::SentencePieceTokenizer(model_path);
}

void seed_sentencepiece_train(const std::vector<std::string>& sentences, int vocab_size, const char* model_path_c) {
  using namespace seed::models;
  const std::string model_path = model_path_c;
  SEED_CHECK(!sentences.empty(), kInvalidArgument) << "cannot train a tokenizer on no text";
  SEED_CHECK(vocab_size > 0, kInvalidArgument) << "vocab_size must be > 0, got " << vocab_size;
  // Llama 2's settings: lossless (identity normalisation, whitespace kept
  // as is, newlines and other unseen characters as byte tokens), one token
  // per digit so that arithmetic sees each digit. BPE rather than unigram:
  // on Game-of-24 steps plus English prose (vocab 512-2048) both compress to
  // within 1% of each other, but BPE trains ~6x faster and reaches a given
  // vocab_size on a smaller corpus. One thread: the same corpus gives the
  // same model bytes on every machine. The trainer's logging is silenced
  // (see kSilent); its failures still come back as a status.
  const std::unordered_map<std::string, std::string> options = {
      {"model_type", "bpe"},
      {"vocab_size", std::to_string(vocab_size)},
      {"hard_vocab_limit", "true"},
      {"byte_fallback", "true"},
      {"split_digits", "true"},
      {"normalization_rule_name", "identity"},
      {"remove_extra_whitespaces", "false"},
      {"add_dummy_prefix", "true"},
      {"allow_whitespace_only_pieces", "true"},
      {"unk_id", "0"},
      {"bos_id", "1"},
      {"eos_id", "2"},
      {"pad_id", "-1"},
      {"num_threads", "1"},
      {"minloglevel", std::to_string(kSilent)},
  };
  VectorSentenceIterator iterator(sentences);
  std::string model;
  const auto status = sentencepiece::SentencePieceTrainer::Train(options, &iterator, &model);
  SEED_CHECK(status.ok(), kInvalidArgument)
      << "training a SentencePiece model with vocab_size " << vocab_size << " on "
      << sentences.size() << " sentences failed (" << status.ToString()
      << "); if the corpus is too small for vocab_size, lower vocab_size or add text";

  // Readers never see half a model.
  seed::write_file_atomically(model_path, model);
}
