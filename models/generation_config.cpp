#include "models/generation_config.h"

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "models/base/json_fields.h"

namespace seed::models {

GenerationConfig GenerationConfig::from_json(const nlohmann::json& json, const std::string& source) {
  GenerationConfig config;
  JsonFields fields(json, source);
  if (const nlohmann::json* eos = fields.find("eos_token_id")) {
    const nlohmann::json list = eos->is_array() ? *eos : nlohmann::json::array({*eos});
    for (const auto& id : list) {
      int value = 0;
      fields.convert(id, "eos_token_id", &value);
      config.eos_token_ids.push_back(value);
    }
  }
  fields.optional("bos_token_id", &config.bos_token_id);
  fields.optional("pad_token_id", &config.pad_token_id);
  if (fields.has("do_sample") || fields.has("temperature") || fields.has("top_k") || fields.has("top_p")) {
    SamplingParams sampling;
    bool do_sample = true;
    double temperature = sampling.temperature, top_p = sampling.top_p;
    int top_k = sampling.top_k;
    fields.optional("do_sample", &do_sample);
    fields.optional("temperature", &temperature);
    fields.optional("top_k", &top_k);
    fields.optional("top_p", &top_p);
    sampling.temperature = do_sample ? static_cast<float>(temperature) : 0.0f;
    sampling.top_k = top_k;
    sampling.top_p = static_cast<float>(top_p);
    sampling.validate([&fields](const std::string& field) { return fields.where(field); });
    config.sampling = sampling;
  }
  return config;
}

GenerationConfig GenerationConfig::from_file(const std::string& path) {
  if (!std::filesystem::exists(path)) return {};
  return from_json(read_json_file(path), path);
}

std::vector<int32_t> stop_token_ids(int32_t tokenizer_eos, const GenerationConfig& config) {
  std::vector<int32_t> ids;
  if (tokenizer_eos >= 0) ids.push_back(tokenizer_eos);
  for (const int32_t id : config.eos_token_ids) {
    if (std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
  }
  return ids;
}

}  // namespace seed::models
