// TrainConfig: parsing, validation and writing of `seed train` configs.
//
// Unlike config.json (where Hugging Face adds keys seed has no use for), a
// training config is written by hand for seed, so a key seed does not know is
// a typo and an error.
#include "models/training/train_config.h"

#include <cstdint>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <utility>

#include "models/base/error.h"
#include "models/base/json_fields.h"

namespace seed::models {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

std::string resolve(const std::string& path, const std::string& base_dir) {
  if (path.empty() || fs::path(path).is_absolute() || base_dir.empty()) return path;
  return (fs::path(base_dir) / path).lexically_normal().string();
}

void check_file(const std::string& path, const std::string& where) {
  std::error_code ec;
  SEED_CHECK(fs::is_regular_file(path, ec), kNotFound) << where << ": file " << path << " does not exist";
}

void check_model_dir(const std::string& dir, const std::string& where) {
  std::error_code ec;
  SEED_CHECK(fs::is_directory(dir, ec), kNotFound) << where << ": folder " << dir << " does not exist";
}

void parse_model(const json& value, const std::string& source, ModelConfig* model) {
  JsonFields f(value, source, "model.");
  f.required("hidden_size", &model->hidden_size);
  f.required("intermediate_size", &model->intermediate_size);
  f.required("num_hidden_layers", &model->num_hidden_layers);
  f.required("num_attention_heads", &model->num_attention_heads);
  model->num_key_value_heads = model->num_attention_heads;
  f.optional("num_key_value_heads", &model->num_key_value_heads);
  model->max_position_embeddings = 0;  // filled from seq_len below if absent
  f.optional("max_position_embeddings", &model->max_position_embeddings);
  model->tie_word_embeddings = true;
  f.optional("tie_word_embeddings", &model->tie_word_embeddings);
  f.optional("rope_theta", &model->rope_theta);
  f.optional("rms_norm_eps", &model->rms_norm_eps);
  f.reject_unknown("check its spelling (see models/training/train_config.h)");
  SEED_CHECK(model->num_attention_heads > 0 && model->hidden_size % model->num_attention_heads == 0, kInvalidArgument)
      << f.where("num_attention_heads") << " (" << model->num_attention_heads
      << ") must be positive and divide hidden_size (" << model->hidden_size << ")";
  model->head_dim = model->hidden_size / model->num_attention_heads;
}

}  // namespace

void TrainConfig::validate() const {
  const std::string at = source.empty() ? std::string("train config") : source;
  auto field = [&](const char* name) { return at + ": field '" + name + "'"; };
  SEED_CHECK(!corpus.empty(), kInvalidArgument) << field("corpus") << " must list at least one JSONL file";
  SEED_CHECK(eval_fraction >= 0 && eval_fraction <= 0.5, kInvalidArgument)
      << field("eval_fraction") << " must be in [0, 0.5], got " << eval_fraction;
  if (edd.enabled()) {
    SEED_CHECK(tokenizer.train_vocab_size == 0, kInvalidArgument)
        << field("tokenizer") << ": an EDD draft uses its target's tokenizer; give {\"from\": DIR} or leave it out";
    SEED_CHECK(!distill.enabled(), kInvalidArgument)
        << field("distill") << " must be absent with 'edd', whose objective is already the KL to the target";
    SEED_CHECK(edd.target_layer >= -1, kInvalidArgument)
        << field("edd.target_layer") << " must be a layer of the target (0-based), got " << edd.target_layer;
    SEED_CHECK(edd.block_min >= 1 && edd.block_max >= edd.block_min, kInvalidArgument)
        << field("edd.block_max") << " and 'edd.block_min' must satisfy 1 <= block_min <= block_max, got "
        << edd.block_min << " and " << edd.block_max;
  } else {
    SEED_CHECK((tokenizer.train_vocab_size > 0) != !tokenizer.from_dir.empty(), kInvalidArgument)
        << field("tokenizer") << " must be either {\"train\": {\"vocab_size\": N}} or {\"from\": DIR}";
  }
  SEED_CHECK(batch_size > 0, kInvalidArgument) << field("batch_size") << " must be positive";
  SEED_CHECK(seq_len > 1, kInvalidArgument) << field("seq_len") << " must be at least 2";
  SEED_CHECK(steps > 0, kInvalidArgument) << field("steps") << " must be positive";
  SEED_CHECK(lr > 0, kInvalidArgument) << field("lr") << " must be positive";
  SEED_CHECK(min_lr >= 0 && min_lr <= lr, kInvalidArgument)
      << field("min_lr") << " must be in [0, lr = " << lr << "], got " << min_lr;
  SEED_CHECK(warmup_steps >= 0 && warmup_steps <= steps, kInvalidArgument)
      << field("warmup_steps") << " must be in [0, steps = " << steps << "], got " << warmup_steps;
  SEED_CHECK(weight_decay >= 0, kInvalidArgument) << field("weight_decay") << " must be >= 0";
  SEED_CHECK(beta1 >= 0 && beta1 < 1 && beta2 >= 0 && beta2 < 1, kInvalidArgument)
      << field("betas") << " must both be in [0, 1), got [" << beta1 << ", " << beta2 << "]";
  SEED_CHECK(adam_eps > 0, kInvalidArgument) << field("adam_eps") << " must be positive";
  SEED_CHECK(grad_clip >= 0, kInvalidArgument) << field("grad_clip") << " must be >= 0 (0 = off)";
  SEED_CHECK(eval_interval >= 0, kInvalidArgument) << field("eval_interval") << " must be >= 0";
  SEED_CHECK(eval_batches > 0, kInvalidArgument) << field("eval_batches") << " must be positive";
  SEED_CHECK(checkpoint_interval >= 0, kInvalidArgument) << field("checkpoint_interval") << " must be >= 0";
  SEED_CHECK(!output.empty(), kInvalidArgument) << field("output") << " must name the output folder";
  SEED_CHECK(threads >= 0, kInvalidArgument) << field("threads") << " must be >= 0 (0 = all cores)";
  SEED_CHECK(device == "cpu" || device.rfind("cuda", 0) == 0, kInvalidArgument)
      << field("device") << " must be \"cpu\" or \"cuda:N\", got \"" << device << "\"";
  SEED_CHECK(precision == "float32" || precision == "bfloat16", kInvalidArgument)
      << field("precision") << " must be \"float32\" or \"bfloat16\", got \"" << precision << "\"";
  if (distill.enabled()) {
    SEED_CHECK(distill.alpha >= 0 && distill.alpha <= 1, kInvalidArgument)
        << field("distill.alpha") << " must be in [0, 1], got " << distill.alpha;
    SEED_CHECK(distill.temperature > 0, kInvalidArgument) << field("distill.temperature") << " must be positive";
  }
  if (edd.enabled()) return;  // the shape is the target's: edd_model_config() checks it
  SEED_CHECK(model.max_position_embeddings >= seq_len, kInvalidArgument)
      << field("model.max_position_embeddings") << " (" << model.max_position_embeddings
      << ") must be at least seq_len (" << seq_len << ")";
  // The vocabulary is not known yet; check the shape with a placeholder.
  ModelConfig shape = model;
  shape.vocab_size = std::max<int64_t>(shape.vocab_size, 1);
  try {
    shape.validate();
  } catch (const Error& e) {
    SEED_FAIL(kInvalidArgument) << at << ": field 'model': " << e.what();
  }
}

TrainConfig TrainConfig::from_json(const json& value, const std::string& source, const std::string& base_dir) {
  TrainConfig c;
  c.source = source;
  JsonFields f(value, source, "");

  if (const json* edd = f.find("edd")) {
    JsonFields e(*edd, source, "edd.");
    e.required("target", &c.edd.target);
    e.optional("target_layer", &c.edd.target_layer);
    e.optional("block_min", &c.edd.block_min);
    e.optional("block_max", &c.edd.block_max);
    e.reject_unknown("check its spelling (see models/training/train_config.h)");
    SEED_CHECK(!c.edd.target.empty(), kInvalidArgument) << e.where("target") << " must name the target's folder";
    c.edd.target = resolve(c.edd.target, base_dir);
    check_model_dir(c.edd.target, e.where("target"));
  }
  const json* model = f.find("model");
  if (c.edd.enabled()) {
    SEED_CHECK(model == nullptr, kInvalidArgument)
        << f.where("model") << " must be absent with 'edd': the draft's shape is its target's with one decoder layer";
  } else {
    SEED_CHECK(model != nullptr, kInvalidArgument) << f.where("model") << " is required but missing";
    parse_model(*model, source, &c.model);
  }

  const json* corpus = f.find("corpus");
  SEED_CHECK(corpus != nullptr && corpus->is_array(), kInvalidArgument)
      << f.where("corpus") << " is required: a list of JSONL files";
  for (size_t i = 0; i < corpus->size(); ++i) {
    const std::string key = "corpus[" + std::to_string(i) + "]";
    std::string path;
    f.convert((*corpus)[i], key, &path);
    c.corpus.push_back(resolve(path, base_dir));
    check_file(c.corpus.back(), f.where(key));
  }
  const bool has_fraction = f.has("eval_fraction");
  f.optional("eval_fraction", &c.eval_fraction);
  f.optional("eval_file", &c.eval_file);
  if (!c.eval_file.empty()) {
    SEED_CHECK(!has_fraction, kInvalidArgument)
        << f.where("eval_file") << ": give eval_file or eval_fraction, not both";
    c.eval_fraction = 0;
    c.eval_file = resolve(c.eval_file, base_dir);
    check_file(c.eval_file, f.where("eval_file"));
  }

  const json* tokenizer = f.find("tokenizer");
  SEED_CHECK(tokenizer != nullptr || c.edd.enabled(), kInvalidArgument)
      << f.where("tokenizer") << " is required: {\"train\": {\"vocab_size\": N}} or {\"from\": DIR}";
  if (tokenizer == nullptr) {
    c.tokenizer.from_dir = c.edd.target;
    check_file(c.tokenizer.from_dir + "/tokenizer.model", f.where("edd.target"));
  } else {
    JsonFields t(*tokenizer, source, "tokenizer.");
    if (const json* train = t.find("train")) {
      JsonFields tt(*train, source, "tokenizer.train.");
      tt.required("vocab_size", &c.tokenizer.train_vocab_size);
      tt.reject_unknown("check its spelling (see models/training/train_config.h)");
      SEED_CHECK(c.tokenizer.train_vocab_size > 0, kInvalidArgument)
          << tt.where("vocab_size") << " must be positive";
    }
    t.optional("from", &c.tokenizer.from_dir);
    t.reject_unknown("check its spelling (see models/training/train_config.h)");
    if (!c.tokenizer.from_dir.empty()) {
      c.tokenizer.from_dir = resolve(c.tokenizer.from_dir, base_dir);
      check_file(c.tokenizer.from_dir + "/tokenizer.model", t.where("from"));
    }
  }

  if (const json* distill = f.find("distill")) {
    JsonFields d(*distill, source, "distill.");
    d.required("teacher", &c.distill.teacher);
    d.optional("alpha", &c.distill.alpha);
    d.optional("temperature", &c.distill.temperature);
    d.reject_unknown("check its spelling (see models/training/train_config.h)");
    c.distill.teacher = resolve(c.distill.teacher, base_dir);
    check_model_dir(c.distill.teacher, d.where("teacher"));
  }

  f.optional("init", &c.init);
  if (!c.init.empty()) {
    c.init = resolve(c.init, base_dir);
    check_model_dir(c.init, f.where("init"));
  }

  f.optional("batch_size", &c.batch_size);
  f.optional("seq_len", &c.seq_len);
  f.optional("steps", &c.steps);
  f.optional("lr", &c.lr);
  c.min_lr = c.lr / 10;
  f.optional("min_lr", &c.min_lr);
  f.optional("warmup_steps", &c.warmup_steps);
  f.optional("weight_decay", &c.weight_decay);
  if (const json* betas = f.find("betas")) {
    SEED_CHECK(betas->is_array() && betas->size() == 2, kInvalidArgument)
        << f.where("betas") << " must be a list of two numbers [beta1, beta2]";
    f.convert((*betas)[0], "betas[0]", &c.beta1);
    f.convert((*betas)[1], "betas[1]", &c.beta2);
  }
  f.optional("adam_eps", &c.adam_eps);
  f.optional("grad_clip", &c.grad_clip);
  f.optional("eval_interval", &c.eval_interval);
  f.optional("eval_batches", &c.eval_batches);
  f.optional("checkpoint_interval", &c.checkpoint_interval);
  f.required("output", &c.output);
  c.output = resolve(c.output, base_dir);
  f.optional("resume", &c.resume);
  f.optional("seed", &c.seed);
  f.optional("threads", &c.threads);
  f.optional("device", &c.device);
  f.optional("precision", &c.precision);
  f.reject_unknown("check its spelling (see models/training/train_config.h)");

  if (c.model.max_position_embeddings == 0) c.model.max_position_embeddings = c.seq_len;
  c.validate();
  if (c.edd.enabled()) {
    c.model = edd_model_config(c);
    c.edd.target_layer = c.model.edd_target_layer;
  }
  return c;
}

TrainConfig TrainConfig::from_file(const std::string& path) {
  return from_json(read_json_file(path), path, fs::path(path).parent_path().string());
}

json TrainConfig::to_json() const {
  json model_json = {{"hidden_size", model.hidden_size},
                     {"intermediate_size", model.intermediate_size},
                     {"num_hidden_layers", model.num_hidden_layers},
                     {"num_attention_heads", model.num_attention_heads},
                     {"num_key_value_heads", model.num_key_value_heads},
                     {"max_position_embeddings", model.max_position_embeddings},
                     {"tie_word_embeddings", model.tie_word_embeddings},
                     {"rope_theta", model.rope_theta},
                     {"rms_norm_eps", model.rms_norm_eps}};
  json j = edd.enabled() ? json{{"edd",
                                  {{"target", edd.target},
                                   {"target_layer", edd.target_layer},
                                   {"block_min", edd.block_min},
                                   {"block_max", edd.block_max}}}}
                          : json{{"model", model_json}};
  j["corpus"] = corpus;
  if (eval_file.empty()) {
    j["eval_fraction"] = eval_fraction;
  } else {
    j["eval_file"] = eval_file;
  }
  if (tokenizer.from_dir.empty() && !edd.enabled()) {
    j["tokenizer"] = {{"train", {{"vocab_size", tokenizer.train_vocab_size}}}};
  } else {
    j["tokenizer"] = {{"from", tokenizer.from_dir.empty() ? edd.target : tokenizer.from_dir}};
  }
  if (!init.empty()) j["init"] = init;
  if (distill.enabled()) {
    j["distill"] = {{"teacher", distill.teacher}, {"alpha", distill.alpha}, {"temperature", distill.temperature}};
  }
  j.update({{"batch_size", batch_size},
            {"seq_len", seq_len},
            {"steps", steps},
            {"lr", lr},
            {"min_lr", min_lr},
            {"warmup_steps", warmup_steps},
            {"weight_decay", weight_decay},
            {"betas", {beta1, beta2}},
            {"adam_eps", adam_eps},
            {"grad_clip", grad_clip},
            {"eval_interval", eval_interval},
            {"eval_batches", eval_batches},
            {"checkpoint_interval", checkpoint_interval},
            {"output", output},
            {"resume", resume},
            {"seed", seed},
            {"threads", threads},
            {"device", device},
            {"precision", precision}});
  return j;
}

ModelConfig edd_model_config(const TrainConfig& config) {
  const std::string at = config.source.empty() ? std::string("train config") : config.source;
  auto field = [&](const char* name) { return at + ": field '" + name + "'"; };
  SEED_CHECK(config.edd.enabled(), kInvalidArgument) << field("edd") << " is not set";
  check_file(config.edd.target + "/config.json", field("edd.target"));
  ModelConfig m = ModelConfig::from_file(config.edd.target + "/config.json");
  SEED_CHECK(!m.is_edd(), kInvalidArgument)
      << field("edd.target") << ": " << config.edd.target << " is itself an EDD draft; name the target it drafts for";
  const int64_t layers = m.num_hidden_layers;
  const int64_t layer = config.edd.target_layer >= 0 ? config.edd.target_layer : std::max<int64_t>(0, layers - 4);
  SEED_CHECK(layer < layers, kInvalidArgument)
      << field("edd.target_layer") << " is " << layer << " but the target " << config.edd.target << " has "
      << layers << " layers (0.." << layers - 1 << ")";
  SEED_CHECK(m.max_position_embeddings >= config.seq_len, kInvalidArgument)
      << field("seq_len") << " (" << config.seq_len << ") exceeds the context of the EDD target "
      << config.edd.target << " (" << m.max_position_embeddings << ")";
  m.num_hidden_layers = 1;
  m.edd_target_layer = layer;
  m.torch_dtype = "float32";
  return m;
}

}  // namespace seed::models
