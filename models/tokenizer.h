// Tokenizer: text <-> token ids for a model folder.
//
// Implementations: SentencePiece (tokenizer.model, as in Llama 2) and Hugging
// Face tokenizer.json (models/hf_tokenizer/: Llama 3, Qwen, DeepSeek, Gemma).
// Thread-safety: const methods may be called concurrently.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace seed::models {

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;

  // add_bos adds the special tokens (BOS; tokenizer.json: its template).
  virtual std::vector<int32_t> encode(std::string_view text, bool add_bos) const = 0;
  // Decodes a whole sequence (leading-space handling as the model expects;
  // bos/eos decode to nothing). kOutOfRange for an id outside the vocab.
  virtual std::string decode(const std::vector<int32_t>& ids) const = 0;
  virtual int64_t vocab_size() const = 0;
  virtual int32_t bos_id() const = 0;  // -1 if the tokenizer has none
  virtual int32_t eos_id() const = 0;  // -1 if the tokenizer has none
  // The tokens added beside the learned vocabulary (tokenizer.json's
  // added_tokens: chat markers, <think>, tool calls), which a text seldom
  // holds and a generation may; none for SentencePiece.
  virtual std::vector<int32_t> added_token_ids() const { return {}; }
};

// Loads a model folder's tokenizer: tokenizer.model (SentencePiece), else
// tokenizer.json (+ tokenizer_config.json). Throws kNotFound naming a missing
// folder, or listing the files it looked for in an existing one; kCorruption
// naming the file if it cannot be parsed; kInvalidArgument naming the file
// and field of a malformed or unsupported tokenizer.json.
std::unique_ptr<Tokenizer> load_tokenizer(const std::string& model_dir);

// Whether `model_dir` holds a file load_tokenizer reads (tokenizer.model or
// tokenizer.json), without reading it.
bool has_tokenizer(const std::string& model_dir);

// Turns a growing token sequence into text increments for streaming: push()
// returns only text that later tokens cannot change (complete UTF-8, settled
// leading spaces); finish() returns the rest and resets the stream for a new
// sequence. All pushes plus finish() concatenate to exactly decode(tokens).
// A push decodes a short window of recent tokens, not the whole sequence.
// push() throws kOutOfRange for an id outside the vocab, stream unchanged.
// Borrowed tokenizer must outlive the stream. Not thread-safe.
class TextStream {
 public:
  explicit TextStream(const Tokenizer& tokenizer) : tokenizer_(tokenizer) {}
  std::string push(int32_t token);
  std::string finish();

 private:
  const Tokenizer& tokenizer_;
  std::vector<int32_t> tokens_;  // the window: recent tokens, oldest already emitted
  size_t emitted_bytes_ = 0;     // bytes of decode(tokens_) already returned
};

// Trains a SentencePiece model on `sentences` (libsentencepiece's trainer),
// with byte fallback so that any text encodes, and writes it to
// `model_path` (a tokenizer.model). Ids as in Llama 2: unk 0, bos 1, eos 2,
// no pad; BPE, each digit its own token, text kept exactly (no whitespace
// folding). Deterministic: the same corpus gives the same file. Throws
// kInvalidArgument if the corpus is empty or too small for vocab_size
// (nothing written), kIo if the file cannot be written.
void train_sentencepiece(const std::vector<std::string>& sentences, int vocab_size,
                         const std::string& model_path);

}  // namespace seed::models
