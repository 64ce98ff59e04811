// HfTokenizer: a Hugging Face tokenizer.json behind seed's Tokenizer
// interface. Pipeline (as the Rust tokenizers crate runs it): added tokens
// are cut out of the raw text; the rest is normalized, cut at the
// normalized added tokens, pre-tokenized into words, and each word is
// BPE-encoded; encoding with special tokens then applies the post-processor
// (or, where tokenizer_config.json sets add_bos_token / add_eos_token, adds
// those tokens as transformers does). Decoding drops special tokens and runs
// the decoder; it never applies transformers' clean_up_tokenization_spaces
// (which is lossy: " ." becomes ".").
//
// Thread-safety: const methods may be called concurrently.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>

#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "models/hf_tokenizer/added_tokens.h"
#include "models/hf_tokenizer/bpe_model.h"
#include "models/hf_tokenizer/decoders.h"
#include "models/hf_tokenizer/normalizers.h"
#include "models/hf_tokenizer/post_processors.h"
#include "models/hf_tokenizer/pre_tokenizers.h"
#include "models/hf_tokenizer/tokenizer_config.h"
#include "models/tokenizer.h"

namespace seed::models::hf {

class HfTokenizer : public Tokenizer {
 public:
  // `tokenizer` is the parsed tokenizer.json, `source` its path for error
  // messages (kInvalidArgument naming the field: a missing model, a bad
  // merge, an invalid regex, an unsupported component type). `config`
  // (tokenizer_config.json) names bos/eos and may override which special
  // tokens encoding adds; kInvalidArgument if it names a token the
  // vocabulary lacks.
  HfTokenizer(const nlohmann::json& tokenizer, const std::string& source, const TokenizerConfig& config = {});

  // Reads tokenizer.json at `path` (and nothing else). kNotFound if absent,
  // kCorruption naming the file if it is not JSON.
  static std::unique_ptr<HfTokenizer> load(const std::string& path, const TokenizerConfig& config = {});

  // add_bos: add the special tokens (Hugging Face's add_special_tokens).
  // Throws kInvalidArgument if `text` is not valid UTF-8.
  std::vector<int32_t> encode(std::string_view text, bool add_bos) const override;
  std::string decode(const std::vector<int32_t>& ids) const override;
  // skip_special=false keeps special tokens' text (for round-trip checks).
  std::string decode(const std::vector<int32_t>& ids, bool skip_special) const;
  int64_t vocab_size() const override { return vocab_size_; }
  int32_t bos_id() const override { return bos_id_; }
  int32_t eos_id() const override { return eos_id_; }
  std::vector<int32_t> added_token_ids() const override;
  // The id of a token (model vocab or added), if any.
  std::optional<int32_t> token_to_id(const std::string& token) const;

 private:
  // Appends the ids of text that holds no raw-matched added token.
  void encode_plain(std::string_view text, bool at_start, std::vector<int32_t>* ids) const;

  std::vector<AddedToken> added_;
  std::unordered_map<int32_t, const AddedToken*> added_by_id_;
  std::unique_ptr<AddedTokenMatcher> raw_matcher_;         // normalized=false tokens
  std::unique_ptr<AddedTokenMatcher> normalized_matcher_;  // normalized=true tokens
  std::unique_ptr<Normalizer> normalizer_;
  std::unique_ptr<PreTokenizer> pre_tokenizer_;
  std::unique_ptr<BpeModel> model_;
  std::unique_ptr<PostProcessor> post_processor_;
  std::unique_ptr<Decoder> decoder_;
  // Set when tokenizer_config.json decides the special tokens: the ids to
  // put before and after the text instead of running the post-processor.
  std::optional<std::pair<std::vector<int32_t>, std::vector<int32_t>>> config_specials_;
  int64_t vocab_size_ = 0;
  int32_t bos_id_ = -1;
  int32_t eos_id_ = -1;
};

}  // namespace seed::models::hf
