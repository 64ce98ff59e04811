// BpeModel: tokenizer.json's "model" of type BPE. Encodes one pre-tokenized
// word by applying merges lowest rank first (leftmost on ties) to its
// characters, as the Rust tokenizers crate does, with a cache of recent
// words (most text repeats its words). Options: byte_fallback (<0xAB>
// tokens for characters outside the vocab, Llama 2), ignore_merges (a word
// that is itself a token is that token, Llama 3), unk_token and fuse_unk,
// continuing_subword_prefix, end_of_word_suffix. Merges come as "a b"
// strings or ["a", "b"] pairs.
//
// Thread-safety: encode() may be called concurrently (the cache is locked).
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <array>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "models/hf_tokenizer/field.h"

namespace seed::models::hf {

class BpeModel {
 public:
  // Throws kInvalidArgument naming `field` (e.g. "model.merges[12]") for a
  // missing vocab or merges, a merge that is not two tokens, or a merge whose
  // parts or result are not in the vocab.
  BpeModel(const nlohmann::json& json, const Field& field);

  // Appends the ids of `word` to `ids`. A character outside the vocab becomes
  // its byte tokens (byte_fallback), else the unk token, else is dropped.
  void encode(std::string_view word, std::vector<int32_t>* ids) const;

  std::optional<int32_t> token_to_id(std::string_view token) const;
  // The token of `id`, or null if the vocab has no such id.
  const std::string* id_to_token(int32_t id) const;
  int32_t max_id() const { return static_cast<int32_t>(tokens_.size()) - 1; }

 private:
  struct Merge {
    int32_t rank;
    int32_t result;
  };
  static uint64_t pair_key(int32_t left, int32_t right) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) | static_cast<uint32_t>(right);
  }
  // The characters of `word` as ids before any merge.
  std::vector<int32_t> initial_symbols(std::string_view word) const;
  void merge_all(std::vector<int32_t>* symbols) const;

  std::unordered_map<std::string, int32_t> vocab_;
  std::vector<std::string> tokens_;  // by id; empty where the vocab has a gap
  std::unordered_map<uint64_t, Merge> merges_;
  std::optional<int32_t> unk_id_;
  bool fuse_unk_ = false;
  bool byte_fallback_ = false;
  bool ignore_merges_ = false;
  std::string continuing_subword_prefix_;
  std::string end_of_word_suffix_;
  std::array<int32_t, 256> byte_ids_;  // <0xAB> tokens; -1 where absent

  mutable std::mutex cache_mutex_;
  mutable std::unordered_map<std::string, std::vector<int32_t>> cache_;
};

}  // namespace seed::models::hf
