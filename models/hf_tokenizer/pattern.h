// Pattern: the {"String": ...} or {"Regex": ...} of tokenizer.json's Split
// pre-tokenizer and Replace normalizer/decoder.
//
// Regexes are Oniguruma syntax in the files (the Rust tokenizers' engine);
// PCRE2 (UTF + UCP, so \p{L}, \s, \w are Unicode-aware; JIT-compiled) reads
// the constructs they use: property classes, look-ahead, inline case-
// insensitive groups. Immutable after construction; find_all may be called
// from several threads (each call owns its match data).
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "models/hf_tokenizer/field.h"

namespace seed::models::hf {

class Pattern {
 public:
  // Literal text.
  static Pattern literal(std::string text);
  // A regex; throws kInvalidArgument naming `where` (the file and field),
  // the offset and PCRE2's reason if it does not compile.
  static Pattern regex(const std::string& source, const std::string& where);
  // {"String": s} or {"Regex": r}; throws kInvalidArgument naming `field`.
  static Pattern from_json(const nlohmann::json& json, const Field& field);

  // The non-empty, non-overlapping matches of the pattern in `text`, left to
  // right, as [begin, end) byte offsets. Requires valid UTF-8.
  std::vector<std::pair<size_t, size_t>> find_all(std::string_view text) const;
  // `text` with every match replaced by `content`.
  std::string replace_all(std::string_view text, std::string_view content) const;

 private:
  struct Compiled;
  std::string literal_;
  std::shared_ptr<const Compiled> regex_;  // null for a literal
};

}  // namespace seed::models::hf
