// Added tokens of tokenizer.json ("added_tokens"): strings matched in the
// text before the model sees it (special tokens such as <|im_start|>, and
// extra vocabulary). Matching is leftmost-longest, as in the Rust crate;
// lstrip / rstrip take the whitespace beside a match into it, single_word
// matches only between non-word characters. Tokens with normalized=false
// are matched in the raw text, the others in the normalized text (two
// AddedTokenMatchers). Immutable after construction.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "models/hf_tokenizer/field.h"

namespace seed::models::hf {

struct AddedToken {
  int32_t id = -1;
  std::string content;
  bool special = false;
  bool lstrip = false;
  bool rstrip = false;
  bool single_word = false;
  bool normalized = false;  // matched after the normalizer runs
};

// Parses "added_tokens"; throws kInvalidArgument naming `field`'s entry for a
// missing id or content, or empty content.
std::vector<AddedToken> parse_added_tokens(const nlohmann::json& json, const Field& field);

class AddedTokenMatcher {
 public:
  // `tokens` must outlive the matcher.
  explicit AddedTokenMatcher(const std::vector<const AddedToken*>& tokens);

  // A piece of text: either an added token's match or text between matches.
  struct Segment {
    std::string_view text;
    const AddedToken* token = nullptr;  // null for plain text
  };
  // Cuts `text` at the matches; plain segments may be empty.
  std::vector<Segment> split(std::string_view text) const;

 private:
  // The longest token matching at `text[pos]`, or null.
  const AddedToken* longest_at(std::string_view text, size_t pos) const;

  struct Node {
    const AddedToken* token = nullptr;  // a token ends here
  };
  std::vector<Node> nodes_;                      // the byte trie; node 0 is the root
  std::unordered_map<uint64_t, int32_t> edges_;  // node * 256 + byte -> child
};

}  // namespace seed::models::hf
