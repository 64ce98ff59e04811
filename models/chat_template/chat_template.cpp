#include "models/chat_template/chat_template.h"

#include <algorithm>
#include <cstdint>
#include <filesystem>

#include "models/base/error.h"
#include "models/chat_template/parser.h"
#include "models/hf_tokenizer/hf_tokenizer.h"
#include "models/chat_template/renderer.h"
#include "models/tokenizer.h"

namespace seed::models {
namespace {

std::string tokenizer_config_path(const std::string& model_dir) {
  return (std::filesystem::path(model_dir) / "tokenizer_config.json").string();
}

}  // namespace

ChatTemplate::ChatTemplate(const std::string& source, const hf::TokenizerConfig& config, const std::string& origin)
    : config_(config), origin_(origin) {
  try {
    program_ = chat::parse_template(source);
  } catch (const Error& e) {
    SEED_FAIL(kInvalidArgument) << origin << ": " << e.what();
  }
}

ChatTemplate::~ChatTemplate() = default;
ChatTemplate::ChatTemplate(ChatTemplate&&) noexcept = default;
ChatTemplate& ChatTemplate::operator=(ChatTemplate&&) noexcept = default;

std::optional<ChatTemplate> ChatTemplate::load(const std::string& model_dir) {
  const std::string path = tokenizer_config_path(model_dir);
  const hf::TokenizerConfig config = hf::TokenizerConfig::from_file(path);
  if (config.chat_template.empty()) return std::nullopt;
  return ChatTemplate(config.chat_template, config, path + ": field 'chat_template'");
}

ChatTemplate ChatTemplate::load_required(const std::string& model_dir, const std::string& option) {
  std::optional<ChatTemplate> chat = load(model_dir);
  if (chat.has_value()) return std::move(*chat);
  const std::string path = tokenizer_config_path(model_dir);
  SEED_CHECK(std::filesystem::exists(path), kInvalidArgument)
      << option << ": " << path << " does not exist, so the model has no chat template";
  SEED_FAIL(kInvalidArgument) << option << ": " << path << " has no chat_template";
}

std::string ChatTemplate::render(const nlohmann::ordered_json& messages, bool add_generation_prompt,
                                 const nlohmann::ordered_json& extra) const {
  SEED_CHECK(messages.is_array(), kInvalidArgument) << "chat messages must be a JSON list, got " << messages.type_name();
  for (size_t i = 0; i < messages.size(); ++i) {
    SEED_CHECK(messages[i].is_object() && messages[i].contains("role"), kInvalidArgument)
        << "chat message " << i << " must be an object with a \"role\"";
  }
  // As transformers (Python and JS) call the template: tools and documents none.
  chat::Members variables = {{"messages", chat::value_from_json(messages)},
                             {"add_generation_prompt", chat::Value::of(add_generation_prompt)},
                             {"tools", chat::Value::none()},
                             {"documents", chat::Value::none()}};
  const std::pair<const char*, const std::string*> tokens[] = {
      {"bos_token", &config_.bos_token}, {"eos_token", &config_.eos_token},   {"unk_token", &config_.unk_token},
      {"sep_token", &config_.sep_token}, {"pad_token", &config_.pad_token},   {"cls_token", &config_.cls_token},
      {"mask_token", &config_.mask_token}};
  for (const auto& [name, token] : tokens) {
    if (!token->empty()) variables.emplace_back(name, chat::Value::of(*token));
  }
  if (extra.is_object()) {
    for (const auto& [key, value] : extra.items()) {
      const auto same = [&key = key](const auto& variable) { return variable.first == key; };
      variables.erase(std::remove_if(variables.begin(), variables.end(), same), variables.end());
      variables.emplace_back(key, chat::value_from_json(value));
    }
  }
  try {
    return chat::render_program(program_, variables);
  } catch (const Error& e) {
    SEED_FAIL(kInvalidArgument) << origin_ << ": " << e.what();
  }
}

std::string ChatTemplate::render_prompt(const std::string& system, const std::string& user,
                                       const nlohmann::ordered_json& extra) const {
  nlohmann::ordered_json messages = nlohmann::ordered_json::array();
  if (!system.empty()) messages.push_back({{"role", "system"}, {"content", system}});
  messages.push_back({{"role", "user"}, {"content", user}});
  return render(messages, /*add_generation_prompt=*/true, extra);
}

std::vector<int32_t> ChatTemplate::encode(const Tokenizer& tokenizer, const std::string& text) const {
  const std::string& bos = config_.bos_token;
  const bool reads_special_text = dynamic_cast<const hf::HfTokenizer*>(&tokenizer) != nullptr;
  if (!reads_special_text && !bos.empty() && tokenizer.bos_id() >= 0 && text.rfind(bos, 0) == 0) {
    return tokenizer.encode(std::string_view(text).substr(bos.size()), /*add_bos=*/true);
  }
  return tokenizer.encode(text, /*add_bos=*/false);
}

}  // namespace seed::models
