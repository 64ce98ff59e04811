// ModelConfig: reading, checking and writing Hugging Face config.json.
//
// Parsing is strict about what seed uses (types, required keys, rope types it
// implements) and silent about the rest: HF configs carry many keys that do not
// change the maths of a Llama-family decoder. A null value counts as absent,
// as transformers treats it.
#include "models/model_config.h"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <string_view>
#include <utility>

#include "models/base/error.h"
#include "models/base/json_fields.h"

namespace seed::models {
namespace {

using nlohmann::json;

struct Family {
  const char* model_type;
  const char* architecture;
};

constexpr Family kFamilies[] = {
    {"llama", "LlamaForCausalLM"},
    {"mistral", "MistralForCausalLM"},
    {"qwen2", "Qwen2ForCausalLM"},
    {"qwen3", "Qwen3ForCausalLM"},
};

const Family& family_of(const std::string& model_type, const std::string& where) {
  for (const Family& family : kFamilies) {
    if (model_type == family.model_type) return family;
  }
  SEED_FAIL(kInvalidArgument) << where << ": field 'model_type' is '" << model_type
                              << "'; seed supports llama, mistral, qwen2, qwen3";
}

std::vector<int64_t> parse_eos(const json& value, const JsonFields& fields) {
  std::vector<int64_t> ids;
  if (!value.is_array()) {
    ids.emplace_back();
    fields.convert(value, "eos_token_id", &ids.back());
    return ids;
  }
  for (const json& id : value) {
    ids.emplace_back();
    fields.convert(id, "eos_token_id", &ids.back());
  }
  return ids;
}

RopeScaling parse_rope_scaling(const json& value, const std::string& source) {
  SEED_CHECK(value.is_object(), kInvalidArgument)
      << source << ": field 'rope_scaling' must be null or an object";
  JsonFields fields(value, source, "rope_scaling.");
  RopeScaling rope;
  // transformers renamed "type" to "rope_type"; older configs use the former.
  const bool legacy = fields.find("rope_type") == nullptr && fields.find("type") != nullptr;
  fields.required(legacy ? "type" : "rope_type", &rope.rope_type);
  if (rope.rope_type == "llama3") {
    fields.required("factor", &rope.factor);
    fields.required("low_freq_factor", &rope.low_freq_factor);
    fields.required("high_freq_factor", &rope.high_freq_factor);
    fields.required("original_max_position_embeddings", &rope.original_max_position_embeddings);
  } else if (rope.rope_type == "linear") {
    fields.required("factor", &rope.factor);
  } else {
    SEED_CHECK(rope.rope_type == "default", kInvalidArgument)
        << source << ": field 'rope_scaling.rope_type' is '" << rope.rope_type
        << "'; seed implements linear and llama3 (or null for none)";
  }
  return rope;
}

void check_rope_scaling(const RopeScaling& rope, const std::string& where) {
  const bool known =
      rope.rope_type == "default" || rope.rope_type == "linear" || rope.rope_type == "llama3";
  SEED_CHECK(known, kInvalidArgument) << where << ": field 'rope_scaling.rope_type' is '"
                                      << rope.rope_type << "'; seed implements linear and llama3";
  SEED_CHECK(rope.factor > 0, kInvalidArgument)
      << where << ": field 'rope_scaling.factor' must be positive, got " << rope.factor;
  if (rope.rope_type != "llama3") return;
  // Llama-3 scaling interpolates between the two wavelengths; it divides by
  // their difference.
  SEED_CHECK(rope.low_freq_factor > 0 && rope.high_freq_factor > rope.low_freq_factor,
             kInvalidArgument)
      << where << ": rope_scaling needs 0 < low_freq_factor < high_freq_factor, got "
      << rope.low_freq_factor << " and " << rope.high_freq_factor;
  SEED_CHECK(rope.original_max_position_embeddings > 0, kInvalidArgument)
      << where << ": field 'rope_scaling.original_max_position_embeddings' must be positive";
}

// validate() with the config's source in every message.
void check_config(const ModelConfig& c, const std::string& where) {
  family_of(c.model_type, where);
  const std::pair<const char*, int64_t> sizes[] = {
      {"vocab_size", c.vocab_size},
      {"hidden_size", c.hidden_size},
      {"intermediate_size", c.intermediate_size},
      {"num_hidden_layers", c.num_hidden_layers},
      {"num_attention_heads", c.num_attention_heads},
      {"num_key_value_heads", c.num_key_value_heads},
      {"head_dim", c.head_dim},
      {"max_position_embeddings", c.max_position_embeddings},
  };
  for (const auto& [field, value] : sizes) {
    SEED_CHECK(value > 0, kInvalidArgument)
        << where << ": field '" << field << "' must be positive, got " << value;
  }
  SEED_CHECK(c.rms_norm_eps > 0, kInvalidArgument)
      << where << ": field 'rms_norm_eps' must be positive, got " << c.rms_norm_eps;
  SEED_CHECK(c.rope_theta > 0, kInvalidArgument)
      << where << ": field 'rope_theta' must be positive, got " << c.rope_theta;
  SEED_CHECK(c.num_attention_heads % c.num_key_value_heads == 0, kInvalidArgument)
      << where << ": field 'num_attention_heads' (" << c.num_attention_heads
      << ") must be divisible by 'num_key_value_heads' (" << c.num_key_value_heads
      << "): each kv head serves a whole group of query heads";
  SEED_CHECK(c.head_dim % 2 == 0, kInvalidArgument)
      << where << ": field 'head_dim' (" << c.head_dim
      << ") must be even: RoPE rotates pairs of dimensions";
  SEED_CHECK(!c.eos_token_ids.empty(), kInvalidArgument)
      << where << ": field 'eos_token_id' must name at least one token";
  check_rope_scaling(c.rope_scaling, where);
  SEED_CHECK(c.draft_vocab_size >= 0 && c.draft_vocab_size <= c.vocab_size, kInvalidArgument)
      << where << ": field 'draft_vocab_size' (" << c.draft_vocab_size << ") must be in [0, vocab_size = "
      << c.vocab_size << "]";
  SEED_CHECK(c.draft_vocab_size == 0 || (!c.tie_word_embeddings && c.has_lm_head()), kInvalidArgument)
      << where << ": field 'draft_vocab_size' needs an LM head of its own ('tie_word_embeddings' false): "
      << "its rows are a part of the vocabulary, the embedding's are all of it";
}

}  // namespace

int64_t ModelConfig::num_parameters() const {
  const int64_t attention = hidden_size * q_size() * 2 + hidden_size * kv_size() * 2 +
                            (attention_bias ? q_size() + 2 * kv_size() : 0);
  const int64_t mlp = 3 * hidden_size * intermediate_size;  // gate, up, down
  const int64_t norms = 2 * hidden_size + (has_qk_norm() ? 2 * head_dim : 0);
  const int64_t embeddings = vocab_size * hidden_size;
  return embeddings + num_hidden_layers * (attention + mlp + norms) + hidden_size +
         (tie_word_embeddings ? 0 : head_rows() * hidden_size);
}

bool ModelConfig::has_lm_head() const {
  static constexpr std::string_view kCausalLm = "ForCausalLM";
  return architecture.empty() || (architecture.size() >= kCausalLm.size() &&
                                  architecture.compare(architecture.size() - kCausalLm.size(), kCausalLm.size(),
                                                       kCausalLm) == 0);
}

void ModelConfig::validate() const { check_config(*this, "model config"); }

ModelConfig ModelConfig::from_json(const json& object, const std::string& source) {
  SEED_CHECK(object.is_object(), kInvalidArgument)
      << source << ": a model config must be a JSON object";
  JsonFields fields(object, source);
  ModelConfig c;
  fields.optional("model_type", &c.model_type);
  if (const json* architectures = fields.find("architectures")) {
    SEED_CHECK(architectures->is_array() && !architectures->empty() && architectures->front().is_string(),
               kInvalidArgument)
        << source << ": field 'architectures' must be a list of class names";
    c.architecture = architectures->front().get<std::string>();
  }
  fields.required("vocab_size", &c.vocab_size);
  fields.required("hidden_size", &c.hidden_size);
  fields.required("intermediate_size", &c.intermediate_size);
  fields.required("num_hidden_layers", &c.num_hidden_layers);
  fields.required("num_attention_heads", &c.num_attention_heads);
  c.num_key_value_heads = c.num_attention_heads;
  fields.optional("num_key_value_heads", &c.num_key_value_heads);
  if (fields.find("head_dim") != nullptr) {
    fields.optional("head_dim", &c.head_dim);
  } else if (c.model_type == "qwen3") {
    c.head_dim = 128;  // transformers' Qwen3Config default, whatever the hidden size
  } else if (c.num_attention_heads > 0) {  // else check_config names the field
    SEED_CHECK(c.hidden_size % c.num_attention_heads == 0, kInvalidArgument)
        << source << ": field 'hidden_size' (" << c.hidden_size
        << ") must be divisible by 'num_attention_heads' (" << c.num_attention_heads
        << "), or the config must give 'head_dim'";
    c.head_dim = c.hidden_size / c.num_attention_heads;
  }
  fields.optional("max_position_embeddings", &c.max_position_embeddings);
  // Sliding-window attention (Mistral v0.1; Qwen2/3 with use_sliding_window):
  // seed attends to every earlier position, the same function up to the
  // window and a different one past it, so the context ends at the window.
  bool windowed = c.model_type == "mistral";
  if (c.model_type == "qwen2" || c.model_type == "qwen3") fields.optional("use_sliding_window", &windowed);
  int64_t window = 0;
  if (windowed) fields.optional("sliding_window", &window);
  if (window > 0 && window < c.max_position_embeddings) c.max_position_embeddings = window;
  fields.optional("rms_norm_eps", &c.rms_norm_eps);
  fields.optional("rope_theta", &c.rope_theta);
  if (const json* rope = fields.find("rope_scaling")) {
    c.rope_scaling = parse_rope_scaling(*rope, source);
  }
  c.attention_bias = c.model_type == "qwen2";  // Qwen2 configs imply the q/k/v bias
  fields.optional("attention_bias", &c.attention_bias);
  // Qwen3's attention_bias also puts a bias on o_proj, which seed's
  // attention does not have; no released Qwen3 sets it.
  SEED_CHECK(!(c.model_type == "qwen3" && c.attention_bias), kInvalidArgument)
      << source << ": field 'attention_bias' is true; seed implements Qwen3 without attention biases";
  fields.optional("tie_word_embeddings", &c.tie_word_embeddings);
  fields.optional("draft_vocab_size", &c.draft_vocab_size);
  fields.optional("bos_token_id", &c.bos_token_id);
  if (const json* eos = fields.find("eos_token_id")) c.eos_token_ids = parse_eos(*eos, fields);
  // transformers >= 4.56 writes "dtype" where older versions wrote "torch_dtype".
  fields.optional(fields.find("torch_dtype") ? "torch_dtype" : "dtype", &c.torch_dtype);
  // The decoder implements a bias-free SiLU MLP; anything else would load
  // without error and compute the wrong function.
  std::string hidden_act = "silu";
  fields.optional("hidden_act", &hidden_act);
  SEED_CHECK(hidden_act == "silu", kInvalidArgument)
      << source << ": field 'hidden_act' is '" << hidden_act << "'; seed implements silu only";
  bool mlp_bias = false;
  fields.optional("mlp_bias", &mlp_bias);
  SEED_CHECK(!mlp_bias, kInvalidArgument)
      << source << ": field 'mlp_bias' is true; seed's MLP has no biases";
  if (const json* draft = fields.find("draft")) {
    SEED_CHECK(draft->is_object(), kInvalidArgument) << source << ": field 'draft' must be an object";
    JsonFields draft_fields(*draft, source, "draft.");
    std::string kind;
    draft_fields.required("kind", &kind);
    SEED_CHECK(kind == "edd", kInvalidArgument)
        << source << ": field 'draft.kind' is '" << kind << "'; seed knows edd";
    draft_fields.required("target_layer", &c.edd_target_layer);
    SEED_CHECK(c.edd_target_layer >= 0, kInvalidArgument)
        << source << ": field 'draft.target_layer' must be a layer index (>= 0), got " << c.edd_target_layer;
  }
  check_config(c, source);
  return c;
}

ModelConfig ModelConfig::from_file(const std::string& path) {
  return from_json(read_json_file(path), path);
}

json ModelConfig::to_json() const {
  json out;  // keys sorted, as transformers writes them
  out["architectures"] =
      json::array({architecture.empty() ? family_of(model_type, "model config").architecture : architecture});
  out["model_type"] = model_type;
  out["vocab_size"] = vocab_size;
  out["hidden_size"] = hidden_size;
  out["intermediate_size"] = intermediate_size;
  out["num_hidden_layers"] = num_hidden_layers;
  out["num_attention_heads"] = num_attention_heads;
  out["num_key_value_heads"] = num_key_value_heads;
  out["head_dim"] = head_dim;
  out["hidden_act"] = "silu";
  out["max_position_embeddings"] = max_position_embeddings;
  out["rms_norm_eps"] = rms_norm_eps;
  out["rope_theta"] = rope_theta;
  if (rope_scaling.rope_type == "default") {
    out["rope_scaling"] = nullptr;
  } else {
    json rope = {{"rope_type", rope_scaling.rope_type}, {"factor", rope_scaling.factor}};
    if (rope_scaling.rope_type == "llama3") {
      rope["low_freq_factor"] = rope_scaling.low_freq_factor;
      rope["high_freq_factor"] = rope_scaling.high_freq_factor;
      rope["original_max_position_embeddings"] = rope_scaling.original_max_position_embeddings;
    }
    out["rope_scaling"] = rope;
  }
  out["attention_bias"] = attention_bias;
  out["tie_word_embeddings"] = tie_word_embeddings;
  if (draft_vocab_size > 0) out["draft_vocab_size"] = draft_vocab_size;
  out["bos_token_id"] = bos_token_id;
  if (eos_token_ids.size() == 1) {
    out["eos_token_id"] = eos_token_ids[0];
  } else {
    out["eos_token_id"] = eos_token_ids;
  }
  out["torch_dtype"] = torch_dtype;
  if (is_edd()) out["draft"] = {{"kind", "edd"}, {"target_layer", edd_target_layer}};
  return out;
}

void ModelConfig::save(const std::string& path) const {
  std::ofstream out(path);
  SEED_CHECK(out.good(), kIo) << path << ": cannot write: " << std::strerror(errno);
  out << to_json().dump(2) << '\n';
  out.close();
  SEED_CHECK(!out.fail(), kIo) << path << ": cannot write: " << std::strerror(errno);
}

}  // namespace seed::models
