// Normalizers of tokenizer.json ("normalizer"): rewrite text before it is
// split, e.g. NFC (Qwen), or Prepend("▁") + Replace(" ", "▁") (Llama 2).
// Immutable after construction, safe to call from several threads.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <memory>
#include <string>
#include <string_view>

#include "models/hf_tokenizer/field.h"

namespace seed::models::hf {

class Normalizer {
 public:
  virtual ~Normalizer() = default;
  // Requires valid UTF-8; returns valid UTF-8.
  virtual std::string normalize(std::string_view text) const = 0;
};

// Builds one from its JSON object: NFC, NFD, NFKC, NFKD, Lowercase, Prepend,
// Replace, Strip, StripAccents, Sequence. Returns null for a JSON null.
// Throws kInvalidArgument naming `field` for an unknown type or a bad option.
std::unique_ptr<Normalizer> make_normalizer(const nlohmann::json& json, const Field& field);

}  // namespace seed::models::hf
