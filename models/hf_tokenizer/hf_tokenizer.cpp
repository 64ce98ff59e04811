#include "models/hf_tokenizer/hf_tokenizer.h"

#include <cstdint>
#include <nlohmann/json.hpp>

#include "models/base/error.h"
#include "models/base/json_fields.h"
#include "models/hf_tokenizer/utf8.h"

namespace seed::models::hf {

using json = nlohmann::json;

HfTokenizer::HfTokenizer(const json& tokenizer, const std::string& source, const TokenizerConfig& config) {
  const Field top{source, ""};
  SEED_CHECK(tokenizer.is_object(), kInvalidArgument) << source << ": the top level must be a JSON object";
  const auto member = [&](const char* key) -> const json& {
    static const json null;
    const auto it = tokenizer.find(key);
    return it == tokenizer.end() ? null : *it;
  };
  SEED_CHECK(!member("model").is_null(), kInvalidArgument) << (top / "model").str() << " is missing";
  model_ = std::make_unique<BpeModel>(member("model"), top / "model");
  normalizer_ = make_normalizer(member("normalizer"), top / "normalizer");
  pre_tokenizer_ = make_pre_tokenizer(member("pre_tokenizer"), top / "pre_tokenizer");
  post_processor_ = make_post_processor(member("post_processor"), top / "post_processor");
  decoder_ = make_decoder(member("decoder"), top / "decoder");

  added_ = parse_added_tokens(member("added_tokens"), top / "added_tokens");
  std::vector<const AddedToken*> raw, normalized;
  int64_t max_id = model_->max_id();
  for (const AddedToken& token : added_) {
    added_by_id_.emplace(token.id, &token);
    (token.normalized && normalizer_ ? normalized : raw).push_back(&token);
    max_id = std::max<int64_t>(max_id, token.id);
  }
  raw_matcher_ = std::make_unique<AddedTokenMatcher>(raw);
  normalized_matcher_ = std::make_unique<AddedTokenMatcher>(normalized);
  vocab_size_ = max_id + 1;

  const auto id_of = [&](const std::string& token, const char* field) {
    if (token.empty()) return -1;
    const std::optional<int32_t> id = token_to_id(token);
    SEED_CHECK(id.has_value(), kInvalidArgument)
        << config.source << ": field '" << field << "' names \"" << token << "\", which " << source << " lacks";
    return *id;
  };
  bos_id_ = id_of(config.bos_token, "bos_token");
  eos_id_ = id_of(config.eos_token, "eos_token");
  if (config.add_bos_token.has_value() || config.add_eos_token.has_value()) {
    std::vector<int32_t> before, after;
    if (config.add_bos_token.value_or(false) && bos_id_ >= 0) before.push_back(bos_id_);
    if (config.add_eos_token.value_or(false) && eos_id_ >= 0) after.push_back(eos_id_);
    config_specials_.emplace(std::move(before), std::move(after));
  }
  if (bos_id_ < 0) {  // without a config: the template's leading special token
    std::vector<int32_t> specials;
    if (post_processor_) post_processor_->add_special_tokens(&specials);
    if (!specials.empty()) bos_id_ = specials.front();
  }
}

std::unique_ptr<HfTokenizer> HfTokenizer::load(const std::string& path, const TokenizerConfig& config) {
  return std::make_unique<HfTokenizer>(read_json_file(path), path, config);
}

std::vector<int32_t> HfTokenizer::added_token_ids() const {
  std::vector<int32_t> ids;
  for (const AddedToken& token : added_) ids.push_back(token.id);
  return ids;
}

std::optional<int32_t> HfTokenizer::token_to_id(const std::string& token) const {
  for (const AddedToken& added : added_) {
    if (added.content == token) return added.id;
  }
  return model_->token_to_id(token);
}

void HfTokenizer::encode_plain(std::string_view text, bool at_start, std::vector<int32_t>* ids) const {
  const std::string normalized = normalizer_ ? normalizer_->normalize(text) : std::string(text);
  bool first = true;
  for (const AddedTokenMatcher::Segment& segment : normalized_matcher_->split(normalized)) {
    const bool segment_at_start = at_start && first;
    first = false;
    if (segment.token != nullptr) {
      ids->push_back(segment.token->id);
      continue;
    }
    if (segment.text.empty()) continue;
    std::vector<std::string> words{std::string(segment.text)};
    if (pre_tokenizer_) pre_tokenizer_->split(&words, segment_at_start);
    for (const std::string& word : words) model_->encode(word, ids);
  }
}

std::vector<int32_t> HfTokenizer::encode(std::string_view text, bool add_bos) const {
  SEED_CHECK(utf8_valid(text), kInvalidArgument) << "cannot tokenize text that is not valid UTF-8";
  std::vector<int32_t> ids;
  bool first = true;
  for (const AddedTokenMatcher::Segment& segment : raw_matcher_->split(text)) {
    const bool at_start = first;
    first = false;
    if (segment.token != nullptr) {
      ids.push_back(segment.token->id);
    } else if (!segment.text.empty()) {
      encode_plain(segment.text, at_start, &ids);
    }
  }
  if (add_bos) {
    if (config_specials_) {
      ids.insert(ids.begin(), config_specials_->first.begin(), config_specials_->first.end());
      ids.insert(ids.end(), config_specials_->second.begin(), config_specials_->second.end());
    } else if (post_processor_) {
      post_processor_->add_special_tokens(&ids);
    }
  }
  return ids;
}

std::string HfTokenizer::decode(const std::vector<int32_t>& ids) const { return decode(ids, /*skip_special=*/true); }

std::string HfTokenizer::decode(const std::vector<int32_t>& ids, bool skip_special) const {
  std::vector<std::string> tokens;
  tokens.reserve(ids.size());
  for (const int32_t id : ids) {
    if (const auto it = added_by_id_.find(id); it != added_by_id_.end()) {
      if (!(skip_special && it->second->special)) tokens.push_back(it->second->content);
      continue;
    }
    const std::string* token = model_->id_to_token(id);
    SEED_CHECK(token != nullptr, kOutOfRange) << "token id " << id << " is outside the vocabulary [0, " << vocab_size_ << ")";
    tokens.push_back(*token);
  }
  if (!decoder_) {
    std::string text;
    for (size_t i = 0; i < tokens.size(); ++i) text += (i ? " " : "") + tokens[i];
    return text;
  }
  std::string text;
  for (const std::string& piece : decoder_->decode_chain(std::move(tokens))) text += piece;
  return text;
}

}  // namespace seed::models::hf
