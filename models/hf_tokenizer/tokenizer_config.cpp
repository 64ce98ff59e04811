#include "models/hf_tokenizer/tokenizer_config.h"

#include <filesystem>
#include <nlohmann/json.hpp>

#include "models/base/error.h"
#include "models/base/json_fields.h"

namespace seed::models::hf {
namespace {

std::string read_token(const nlohmann::json& json, const char* key, const std::string& source) {
  const auto it = json.find(key);
  if (it == json.end() || it->is_null()) return "";
  if (it->is_string()) return it->get<std::string>();
  SEED_CHECK(it->is_object() && it->contains("content") && (*it)["content"].is_string(), kInvalidArgument)
      << source << ": field '" << key << "' must be a string or an object with \"content\"";
  return (*it)["content"].get<std::string>();
}

}  // namespace

TokenizerConfig TokenizerConfig::from_json(const nlohmann::json& json, const std::string& source) {
  TokenizerConfig config;
  config.source = source;
  JsonFields fields(json, source);
  config.bos_token = read_token(json, "bos_token", source);
  config.eos_token = read_token(json, "eos_token", source);
  config.pad_token = read_token(json, "pad_token", source);
  config.unk_token = read_token(json, "unk_token", source);
  config.sep_token = read_token(json, "sep_token", source);
  config.cls_token = read_token(json, "cls_token", source);
  config.mask_token = read_token(json, "mask_token", source);
  bool flag = false;
  if (fields.has("add_bos_token")) {
    fields.required("add_bos_token", &flag);
    config.add_bos_token = flag;
  }
  if (fields.has("add_eos_token")) {
    fields.required("add_eos_token", &flag);
    config.add_eos_token = flag;
  }
  // A list of named templates ({"name", "template"}) also occurs; seed uses "default".
  if (const nlohmann::json* chat = fields.find("chat_template")) {
    if (chat->is_string()) {
      config.chat_template = chat->get<std::string>();
    } else {
      SEED_CHECK(chat->is_array(), kInvalidArgument) << fields.where("chat_template") << " must be a string or a list";
      for (const auto& entry : *chat) {
        if (entry.is_object() && entry.value("name", "") == "default" && entry.contains("template") &&
            entry["template"].is_string()) {
          config.chat_template = entry["template"].get<std::string>();
        }
      }
    }
  }
  return config;
}

TokenizerConfig TokenizerConfig::from_file(const std::string& path) {
  if (!std::filesystem::exists(path)) return {};
  return from_json(read_json_file(path), path);
}

}  // namespace seed::models::hf
