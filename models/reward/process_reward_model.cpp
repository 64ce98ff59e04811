// ProcessRewardModel: loading a PRM folder and its heads.
#include "models/reward/process_reward_model.h"

#include <torch/torch.h>

#include <algorithm>
#include <filesystem>
#include <utility>

#include "models/base/error.h"
#include "models/base/json_fields.h"
#include "models/safetensors.h"

namespace seed::models {
namespace {

constexpr const char* kQwenPrm = "Qwen2ForProcessRewardModel";

PrmKind parse_kind(const std::string& kind, const std::string& where) {
  if (kind == "step_tag") return PrmKind::kStepTag;
  if (kind == "classifier") return PrmKind::kClassifier;
  if (kind == "value_head") return PrmKind::kValueHead;
  SEED_FAIL(kInvalidArgument) << where << " is '" << kind << "'; seed knows step_tag, classifier, value_head";
}

// prm.json, or the classifier's defaults for a Qwen2ForProcessRewardModel.
PrmFormat read_format(const std::string& model_dir, const ModelConfig& config) {
  const std::string path = model_dir + "/prm.json";
  PrmFormat format;
  if (!std::filesystem::exists(path)) {
    SEED_CHECK(config.architecture == kQwenPrm, kNotFound)
        << path << ": not found; a process reward model of architecture '"
        << (config.architecture.empty() ? "(none)" : config.architecture)
        << "' needs one to say how it scores (its kind and step tag)";
    return format;
  }
  const nlohmann::json json = read_json_file(path);
  JsonFields fields(json, path);
  std::string kind;
  fields.required("kind", &kind);
  format.kind = parse_kind(kind, fields.where("kind"));
  if (format.kind == PrmKind::kClassifier) {
    fields.optional("step_tag", &format.step_tag);
  } else {
    fields.required("step_tag", &format.step_tag);
  }
  if (format.kind == PrmKind::kStepTag) {
    fields.required("good", &format.good);
    fields.required("bad", &format.bad);
  }
  std::string tokenize = format.kind == PrmKind::kValueHead ? "steps" : "whole";
  fields.optional("tokenize", &tokenize);
  SEED_CHECK(tokenize == "whole" || tokenize == "steps", kInvalidArgument)
      << fields.where("tokenize") << " is '" << tokenize << "'; it must be \"whole\" or \"steps\"";
  format.tokenize = tokenize == "steps" ? PrmTokenize::kSteps : PrmTokenize::kWhole;
  fields.reject_unknown("prm.json knows kind, step_tag, good, bad and tokenize");
  return format;
}

ProcessRewardModel::Head read_head(const std::string& model_dir, const PrmFormat& format, const CausalLM& model,
                                   const Tokenizer& tokenizer) {
  const int64_t h = model.config().hidden_size;
  ProcessRewardModel::Head head;
  if (format.kind == PrmKind::kStepTag) {
    SEED_CHECK(model.config().has_lm_head(), kInvalidArgument)
        << model_dir << "/prm.json: kind 'step_tag' reads an LM head, which architecture '"
        << model.config().architecture << "' has none of";
    const std::string where = model_dir + "/prm.json: field ";
    // The head's rows of the two tokens (a head cut to part of the
    // vocabulary has its own numbering).
    const auto head_row = [&](const std::string& text, const std::string& field) {
      const int32_t token = single_token(tokenizer, text, where + field);
      const int64_t row = model.head_row(token);
      SEED_CHECK(row >= 0, kInvalidArgument) << where << field << ": token " << token << " ('" << text
                                            << "') is not among those the model's LM head scores";
      return row;
    };
    const at::Tensor rows = torch::tensor({head_row(format.good, "'good'"), head_row(format.bad, "'bad'")});
    head.first = model.weights().lm_head.unpacked_rows(rows).to(torch::kFloat).cpu();
    return head;
  }
  const Checkpoint checkpoint = Checkpoint::open(model_dir);
  auto read = [&](const std::string& name, std::vector<int64_t> shape) {
    return checkpoint.read(name, shape).to(torch::kFloat).contiguous();
  };
  if (format.kind == PrmKind::kClassifier) {
    head.first = read("score.0.weight", {h, h});
    head.first_bias = read("score.0.bias", {h});
    head.second = read("score.2.weight", {2, h});
    head.second_bias = read("score.2.bias", {2});
  } else {
    head.first = read("v_head.summary.weight", {1, h});
    head.first_bias = read("v_head.summary.bias", {1});
  }
  return head;
}

}  // namespace

int32_t single_token(const Tokenizer& tokenizer, const std::string& text, const std::string& field) {
  // The token after other text, as a step tag or a label follows a step
  // (SentencePiece starts text alone with a word marker), else alone.
  const std::vector<int32_t> before = tokenizer.encode("0", /*add_bos=*/false);
  const std::vector<int32_t> after = tokenizer.encode("0" + text, false);
  if (after.size() == before.size() + 1 && std::equal(before.begin(), before.end(), after.begin())) {
    return after.back();
  }
  const std::vector<int32_t> alone = tokenizer.encode(text, false);
  SEED_CHECK(alone.size() == 1, kInvalidArgument)
      << field << " is '" << text << "', which the model's tokenizer makes " << alone.size()
      << " tokens; it must be one";
  return alone[0];
}

std::unique_ptr<ProcessRewardModel> ProcessRewardModel::load(const std::string& model_dir,
                                                             const LoadOptions& options) {
  SEED_CHECK(options.tp_group == nullptr, kInvalidArgument)
      << model_dir << ": a process reward model runs whole, not tensor-parallel";
  return load(model_dir, [&] { return CausalLM::load(model_dir, options); });
}

std::unique_ptr<ProcessRewardModel> ProcessRewardModel::load(const std::string& model_dir,
                                                             const ModelLoader& load_model) {
  const ModelConfig config = ModelConfig::from_file(model_dir + "/config.json");
  PrmFormat format = read_format(model_dir, config);
  std::unique_ptr<Tokenizer> tokenizer = load_tokenizer(model_dir);
  const std::string where = std::filesystem::exists(model_dir + "/prm.json") ? model_dir + "/prm.json: field 'step_tag'"
                                                                             : model_dir + ": the step tag";
  single_token(*tokenizer, format.step_tag, where);
  std::shared_ptr<const CausalLM> model = load_model();
  Head head = read_head(model_dir, format, *model, *tokenizer);
  return std::make_unique<ProcessRewardModel>(std::move(model), std::move(tokenizer), std::move(format),
                                              std::move(head));
}

ProcessRewardModel::ProcessRewardModel(std::shared_ptr<const CausalLM> model, std::unique_ptr<Tokenizer> tokenizer,
                                       PrmFormat format, Head head)
    : model_(std::move(model)), tokenizer_(std::move(tokenizer)), format_(std::move(format)), head_(std::move(head)) {
  step_tag_token_ = single_token(*tokenizer_, format_.step_tag, "the PRM's step tag");
  const at::TensorOptions device = model_->tensor_options().dtype(torch::kFloat);
  for (at::Tensor* t : {&head_.first, &head_.first_bias, &head_.second, &head_.second_bias}) {
    if (t->defined()) *t = t->to(device);
  }
}

at::Tensor ProcessRewardModel::rewards(const at::Tensor& hidden) const {
  c10::InferenceMode inference;
  switch (format_.kind) {
    case PrmKind::kStepTag: {
      const at::Tensor logits = torch::linear(hidden, head_.first);  // [rows, 2]: good, bad
      return torch::sigmoid(logits.select(1, 0) - logits.select(1, 1));
    }
    case PrmKind::kClassifier: {
      const at::Tensor inner = torch::relu(torch::linear(hidden, head_.first, head_.first_bias));
      return torch::softmax(torch::linear(inner, head_.second, head_.second_bias), 1).select(1, 1);
    }
    case PrmKind::kValueHead:
      return torch::sigmoid(torch::linear(hidden, head_.first, head_.first_bias)).select(1, 0);
  }
  SEED_FAIL(kInternal) << "unknown PRM kind";
}

}  // namespace seed::models
