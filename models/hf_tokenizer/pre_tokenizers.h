// Pre-tokenizers of tokenizer.json ("pre_tokenizer"): cut normalized text
// into pieces that BPE encodes one by one (the GPT-4-style regex Split of
// Llama 3 / Qwen, ByteLevel's byte-to-character map, Metaspace's "▁").
// Immutable after construction, safe to call from several threads.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "models/hf_tokenizer/field.h"

namespace seed::models::hf {

class PreTokenizer {
 public:
  virtual ~PreTokenizer() = default;
  // Replaces each piece by the pieces it splits into (empty ones dropped).
  // `at_start`: the first piece begins the input text (Metaspace's
  // prepend_scheme "first" prepends only there).
  virtual void split(std::vector<std::string>* pieces, bool at_start) const = 0;
};

// Builds one from its JSON object: ByteLevel, Split, Metaspace, Digits,
// Punctuation, Whitespace, WhitespaceSplit, Sequence. Null for a JSON null.
// Throws kInvalidArgument naming `field` for an unknown type or bad option
// (an invalid regex names its offset).
std::unique_ptr<PreTokenizer> make_pre_tokenizer(const nlohmann::json& json, const Field& field);

// Split behaviours (Rust tokenizers' SplitDelimiterBehavior): what happens
// to the delimiters found in a piece.
enum class SplitBehavior { kRemoved, kIsolated, kMergedWithPrevious, kMergedWithNext, kContiguous };
SplitBehavior parse_split_behavior(const std::string& name, const Field& field);

// Cuts `text` at `spans` ([begin, end) delimiter matches, sorted, disjoint)
// as `behavior` says; appends the non-empty pieces to `out`. With `invert`
// the spans are what to keep and the gaps the delimiters.
void split_at(const std::string& text, const std::vector<std::pair<size_t, size_t>>& spans, SplitBehavior behavior,
              bool invert, std::vector<std::string>* out);

}  // namespace seed::models::hf
