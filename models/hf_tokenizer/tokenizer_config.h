// TokenizerConfig: what seed reads from a model folder's
// tokenizer_config.json (transformers' settings around tokenizer.json).
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <optional>
#include <string>

namespace seed::models::hf {

struct TokenizerConfig {
  // Special tokens by content; empty where the file has none (or null).
  std::string bos_token, eos_token, pad_token, unk_token;
  std::string sep_token, cls_token, mask_token;  // passed to chat templates only
  // Whether encoding with special tokens adds bos / eos; unset: as
  // tokenizer.json's post-processor says.
  std::optional<bool> add_bos_token, add_eos_token;
  std::string chat_template;  // empty if none
  std::string source = "tokenizer_config.json";  // the file, for error messages

  // Parses tokenizer_config.json; a token may be a string or an object with
  // "content" (transformers' AddedToken). kInvalidArgument naming `source`
  // and the field for a value of the wrong type.
  static TokenizerConfig from_json(const nlohmann::json& json, const std::string& source);
  // Reads `path`; a missing file gives the defaults. kCorruption if not JSON.
  static TokenizerConfig from_file(const std::string& path);
};

}  // namespace seed::models::hf
