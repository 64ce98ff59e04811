#include "models/hf_tokenizer/added_tokens.h"

#include <cstdint>
#include <unicode/uchar.h>

#include <nlohmann/json.hpp>

#include "models/base/error.h"
#include "models/hf_tokenizer/json_read.h"
#include "models/hf_tokenizer/utf8.h"

namespace seed::models::hf {
namespace {

bool is_word_char(char32_t cp) { return cp == '_' || u_isalnum(cp); }

// The code point that ends just before `pos`.
char32_t code_point_before(std::string_view text, size_t pos) {
  size_t start = pos - 1;
  while (start > 0 && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80) --start;
  return next_code_point(text, &start);
}

}  // namespace

std::vector<AddedToken> parse_added_tokens(const nlohmann::json& json, const Field& field) {
  std::vector<AddedToken> tokens;
  if (json.is_null()) return tokens;
  SEED_CHECK(json.is_array(), kInvalidArgument) << field.str() << " must be a list";
  for (size_t i = 0; i < json.size(); ++i) {
    const Field entry = field[i];
    const nlohmann::json& value = json[i];
    AddedToken token;
    const int64_t id = read_int(value.is_object() ? value : nlohmann::json::object(), "id", entry, -1);
    SEED_CHECK(id >= 0 && id < kMaxTokenId, kInvalidArgument)
        << (entry / "id").str() << " must be an integer in [0, " << kMaxTokenId << ")";
    token.id = static_cast<int32_t>(id);
    token.content = read_string(value, "content", entry);
    SEED_CHECK(!token.content.empty(), kInvalidArgument) << (entry / "content").str() << " must not be empty";
    token.special = read_bool(value, "special", entry, false);
    token.lstrip = read_bool(value, "lstrip", entry, false);
    token.rstrip = read_bool(value, "rstrip", entry, false);
    token.single_word = read_bool(value, "single_word", entry, false);
    token.normalized = read_bool(value, "normalized", entry, !token.special);
    tokens.push_back(std::move(token));
  }
  return tokens;
}

AddedTokenMatcher::AddedTokenMatcher(const std::vector<const AddedToken*>& tokens) : nodes_(1) {
  for (const AddedToken* token : tokens) {
    int32_t node = 0;
    for (const char c : token->content) {
      const uint64_t key = static_cast<uint64_t>(node) * 256 + static_cast<unsigned char>(c);
      const auto it = edges_.find(key);
      if (it != edges_.end()) {
        node = it->second;
      } else {
        nodes_.emplace_back();
        node = static_cast<int32_t>(nodes_.size() - 1);
        edges_.emplace(key, node);
      }
    }
    if (nodes_[node].token == nullptr) nodes_[node].token = token;  // the first of duplicates wins
  }
}

const AddedToken* AddedTokenMatcher::longest_at(std::string_view text, size_t pos) const {
  const AddedToken* found = nullptr;
  int32_t node = 0;
  for (size_t i = pos; i < text.size(); ++i) {
    const auto it = edges_.find(static_cast<uint64_t>(node) * 256 + static_cast<unsigned char>(text[i]));
    if (it == edges_.end()) break;
    node = it->second;
    if (nodes_[node].token != nullptr) found = nodes_[node].token;
  }
  return found;
}

std::vector<AddedTokenMatcher::Segment> AddedTokenMatcher::split(std::string_view text) const {
  std::vector<Segment> segments;
  if (nodes_.size() == 1) {
    segments.push_back({text, nullptr});
    return segments;
  }
  size_t plain_start = 0;  // where the current plain segment begins
  size_t pos = 0;
  while (pos < text.size()) {
    const AddedToken* token = longest_at(text, pos);
    size_t end = token ? pos + token->content.size() : pos;
    if (token && token->single_word) {
      const bool word_before = pos > 0 && is_word_char(code_point_before(text, pos));
      size_t after = end;
      const bool word_after = end < text.size() && is_word_char(next_code_point(text, &after));
      if (word_before || word_after) token = nullptr;
    }
    if (token == nullptr) {
      pos += utf8_char_length(static_cast<unsigned char>(text[pos]));
      continue;
    }
    size_t begin = pos;
    if (token->lstrip) begin = plain_start + trim_right_whitespace(text.substr(plain_start, pos - plain_start)).size();
    if (token->rstrip) end = text.size() - trim_left_whitespace(text.substr(end)).size();
    segments.push_back({text.substr(plain_start, begin - plain_start), nullptr});
    segments.push_back({text.substr(begin, end - begin), token});
    plain_start = pos = end;
  }
  segments.push_back({text.substr(plain_start), nullptr});
  return segments;
}

}  // namespace seed::models::hf
