// load_tokenizer (picks the implementation from the files in a model folder)
// and TextStream (streaming detokenisation).
#include "models/tokenizer.h"

#include <filesystem>

#include "models/base/error.h"
#include "models/hf_tokenizer/hf_tokenizer.h"
#include "models/sentencepiece_tokenizer.h"

namespace seed::models {
namespace {

// The files a model folder's tokenizer is read from, in order of preference.
constexpr char kSentencePieceFile[] = "tokenizer.model";
constexpr char kTokenizerJsonFile[] = "tokenizer.json";

// U+FFFD, which SentencePiece decodes a byte-fallback token to while the
// character it starts is not complete yet.
constexpr std::string_view kReplacementChar = "\xEF\xBF\xBD";

// TextStream decodes only the tokens since its last compaction; it tries to
// compact once it holds this many, so a push costs O(kStreamWindow) rather
// than O(tokens so far).
constexpr size_t kStreamWindow = 32;

// Size of `text` without a trailing incomplete UTF-8 character.
size_t complete_utf8_size(std::string_view text) {
  size_t start = text.size();
  for (int back = 0; back < 4 && start > 0; ++back) {
    --start;
    const auto byte = static_cast<unsigned char>(text[start]);
    if ((byte & 0xC0) != 0x80) {  // not a continuation byte: a character starts here
      const size_t length = byte < 0x80 ? 1 : byte >= 0xF0 ? 4 : byte >= 0xE0 ? 3 : 2;
      return text.size() - start >= length ? text.size() : start;
    }
  }
  return text.size();
}

// Size of the prefix of `text` that more tokens cannot change: without an
// incomplete character, and without trailing U+FFFD (a later byte token may
// complete the character it stands for).
size_t settled_size(std::string_view text) {
  size_t end = complete_utf8_size(text);
  while (end >= kReplacementChar.size() &&
         text.substr(end - kReplacementChar.size(), kReplacementChar.size()) == kReplacementChar) {
    end -= kReplacementChar.size();
  }
  return end;
}

bool ends_with(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

}  // namespace

bool has_tokenizer(const std::string& model_dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  return fs::exists(fs::path(model_dir) / kSentencePieceFile, ec) ||
         fs::exists(fs::path(model_dir) / kTokenizerJsonFile, ec);
}

std::unique_ptr<Tokenizer> load_tokenizer(const std::string& model_dir) {
  namespace fs = std::filesystem;
  SEED_CHECK(fs::is_directory(model_dir), kNotFound)
      << "model folder " << model_dir << " does not exist (or is not a folder)";
  const fs::path sentencepiece_path = fs::path(model_dir) / kSentencePieceFile;
  if (fs::exists(sentencepiece_path)) {
    return make_sentencepiece_tokenizer(sentencepiece_path.string());
  }
  const fs::path json_path = fs::path(model_dir) / kTokenizerJsonFile;
  if (fs::exists(json_path)) {
    return hf::HfTokenizer::load(json_path.string(),
                                 hf::TokenizerConfig::from_file((fs::path(model_dir) / "tokenizer_config.json").string()));
  }
  SEED_FAIL(kNotFound) << "no tokenizer in " << model_dir
                       << ": looked for tokenizer.model (SentencePiece) and tokenizer.json";
}

// Decoding the tokens and diffing against what was emitted is correct where
// decoding token by token is not: SentencePiece drops the leading space of
// the first piece only, so decode(suffix) is not the suffix of decode(all),
// and byte-fallback tokens of one character only decode together.
//
// Compaction keeps the window short: once everything decoded is emitted, the
// window restarts at its last token t if decode({t}) is nonempty (so the next
// piece keeps its leading space, as it does after the whole sequence; a lone
// bos or "▁" decodes to nothing) and is how the text ends (so t is not a byte
// token that only completes a character in context). Every later diff is then
// the same as against the whole sequence.
std::string TextStream::push(int32_t token) {
  SEED_CHECK(token >= 0 && token < tokenizer_.vocab_size(), kOutOfRange)
      << "token id " << token << " is outside the vocabulary [0, " << tokenizer_.vocab_size()
      << ")";
  tokens_.push_back(token);
  const std::string text = tokenizer_.decode(tokens_);
  const size_t settled = settled_size(text);
  std::string out;
  if (settled > emitted_bytes_) {
    out = text.substr(emitted_bytes_, settled - emitted_bytes_);
    emitted_bytes_ = settled;
  }
  if (tokens_.size() >= kStreamWindow && emitted_bytes_ == text.size()) {
    const std::string last = tokenizer_.decode({token});
    if (!last.empty() && ends_with(text, last)) {
      tokens_.assign(1, token);
      emitted_bytes_ = last.size();
    }
  }
  return out;
}

std::string TextStream::finish() {
  std::string rest;
  if (!tokens_.empty()) {
    const std::string text = tokenizer_.decode(tokens_);
    if (text.size() > emitted_bytes_) rest = text.substr(emitted_bytes_);
  }
  tokens_.clear();
  emitted_bytes_ = 0;
  return rest;
}

}  // namespace seed::models
