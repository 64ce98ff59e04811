#include "models/training/train_setup.h"

#include <torch/torch.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <utility>

#include "models/base/error.h"
#include "models/training/train_checkpoint.h"

namespace seed::models {
namespace {

namespace fs = std::filesystem;

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  SEED_CHECK(in.good(), kIo) << "cannot open " << path;
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void copy_file(const std::string& from, const std::string& to) {
  std::error_code ec;
  if (fs::exists(to, ec) && fs::equivalent(from, to, ec)) return;
  fs::copy_file(from, to, fs::copy_options::overwrite_existing, ec);
  SEED_CHECK(!ec, kIo) << "cannot copy " << from << " to " << to << ": " << ec.message();
}

// A model folder whose logits score the trained model's token ids (a
// teacher, or the weights training starts from) must share its tokenizer.
void check_same_tokenizer(const std::string& dir, const std::string& field, const Tokenizer& tokenizer,
                          const std::string& tokenizer_path, int64_t vocab_size) {
  SEED_CHECK(vocab_size == tokenizer.vocab_size(), kInvalidArgument)
      << field << ": " << dir << " has vocab_size " << vocab_size << " but the trained model's tokenizer has "
      << tokenizer.vocab_size() << " tokens; set \"tokenizer\": {\"from\": \"" << dir << "\"}";
  const std::string other = dir + "/" + kTokenizerFile;
  std::error_code ec;
  SEED_CHECK(fs::is_regular_file(other, ec), kInvalidArgument)
      << field << ": " << dir << " has no " << kTokenizerFile
      << ", so seed cannot check that it shares the trained model's tokenizer";
  SEED_CHECK(read_bytes(other) == read_bytes(tokenizer_path), kInvalidArgument)
      << field << ": " << other << " differs from the trained model's tokenizer; set "
      << "\"tokenizer\": {\"from\": \"" << dir << "\"}";
}

// The folder the run's tokenizer.model is copied from ("" = trained); an
// EDD's defaults to its target's.
std::string tokenizer_dir(const TrainConfig& config) {
  return config.tokenizer.from_dir.empty() && config.edd.enabled() ? config.edd.target : config.tokenizer.from_dir;
}

}  // namespace

void check_device(const TrainConfig& config) {
  if (config.device == "cpu") return;
  int64_t index = 0;
  try {
    index = torch::Device(config.device).index();
  } catch (const c10::Error&) {
    SEED_FAIL(kInvalidArgument) << config.source << ": field 'device' is \"" << config.device
                                << "\"; expected \"cpu\" or \"cuda:N\"";
  }
  SEED_CHECK(torch::cuda::is_available() && index < static_cast<int64_t>(torch::cuda::device_count()),
             kInvalidArgument)
      << config.source << ": field 'device' is \"" << config.device << "\" but this libtorch sees "
      << torch::cuda::device_count() << " CUDA devices; use \"cpu\"";
}

LoadOptions float32_on(const std::string& device) {
  LoadOptions options;
  options.device = device;
  options.weights_dtype = WeightDtype::kFloat32;
  options.keep_parameters = true;
  return options;
}

std::unique_ptr<CausalLM> load_frozen(const TrainConfig& config, const std::string& dir, const std::string& key,
                                      const Tokenizer& tokenizer, const std::string& tokenizer_path) {
  const std::string field = config.source + ": field '" + key + "'";
  const ModelConfig frozen = ModelConfig::from_file(dir + "/config.json");
  check_same_tokenizer(dir, field, tokenizer, tokenizer_path, frozen.vocab_size);
  SEED_CHECK(frozen.max_position_embeddings >= config.seq_len, kInvalidArgument)
      << field << ": the model's context (" << frozen.max_position_embeddings << ") is shorter than seq_len ("
      << config.seq_len << ")";
  auto model = CausalLM::load(dir, float32_on(config.device));
  for (const at::Tensor& p : model->weights().parameters()) p.requires_grad_(false);
  return model;
}

std::unique_ptr<CausalLM> initial_model(const TrainConfig& config, const ModelConfig& shape,
                                        const Tokenizer& tokenizer, const std::string& tokenizer_path,
                                        CausalLM* edd_target) {
  if (config.init.empty()) {
    std::unique_ptr<CausalLM> model = CausalLM::random(shape, config.seed, float32_on(config.device));
    if (edd_target != nullptr) {
      torch::NoGradGuard no_grad;
      LlamaWeights& w = model->weights();
      const LlamaWeights& from = edd_target->weights();
      w.embed.copy_(from.embed);  // a tied LM head is the same tensor
      if (!w.lm_head.weight.is_same(w.embed)) w.lm_head.weight.copy_(from.lm_head.weight);
    }
    return model;
  }
  const std::string field = config.source + ": field 'init'";
  const ModelConfig init = ModelConfig::from_file(config.init + "/config.json");
  check_same_tokenizer(config.init, field, tokenizer, tokenizer_path, init.vocab_size);
  const auto describe = [](const ModelConfig& c) {
    return "hidden " + std::to_string(c.hidden_size) + ", intermediate " + std::to_string(c.intermediate_size) +
           ", " + std::to_string(c.num_hidden_layers) + " layers, " + std::to_string(c.num_attention_heads) +
           " heads (" + std::to_string(c.num_key_value_heads) + " KV), tied " +
           (c.tie_word_embeddings ? "yes" : "no");
  };
  SEED_CHECK(describe(init) == describe(shape), kInvalidArgument)
      << field << ": " << config.init << " has shape " << describe(init) << " but field 'model' asks for "
      << describe(shape);
  return CausalLM::load(config.init, float32_on(config.device));
}

std::vector<Example> read_all(const std::vector<std::string>& files) {
  std::vector<Example> all;
  for (const std::string& file : files) {
    std::vector<Example> part = read_examples(file);
    all.insert(all.end(), std::make_move_iterator(part.begin()), std::make_move_iterator(part.end()));
  }
  return all;
}

std::vector<TokenizedExample> tokenize_all(const Tokenizer& tokenizer, const std::vector<Example>& examples,
                                           int64_t* boundary_merges) {
  std::vector<TokenizedExample> out;
  out.reserve(examples.size());
  for (const Example& example : examples) {
    bool merged = false;
    out.push_back(tokenize_example(tokenizer, example, &merged));
    *boundary_merges += merged ? 1 : 0;
  }
  return out;
}

std::string prepare_tokenizer(const TrainConfig& config, const std::string& checkpoint,
                              const std::vector<Example>& train_examples,
                              const std::function<void(const std::string&)>& note) {
  const std::string path = (fs::path(config.output) / kTokenizerFile).string();
  if (!checkpoint.empty()) {
    copy_file((fs::path(checkpoint) / kTokenizerFile).string(), path);
  } else if (!tokenizer_dir(config).empty()) {
    copy_file(tokenizer_dir(config) + "/" + kTokenizerFile, path);
  } else {
    std::vector<std::string> text;
    text.reserve(train_examples.size());
    for (const Example& e : train_examples) text.push_back(e.prompt + e.completion);
    note("training a SentencePiece tokenizer (vocab " + std::to_string(config.tokenizer.train_vocab_size) +
         ") on " + std::to_string(text.size()) + " examples");
    train_sentencepiece(text, static_cast<int>(config.tokenizer.train_vocab_size), path);
  }
  return path;
}

std::unique_ptr<torch::optim::AdamW> make_optimizer(const std::vector<at::Tensor>& params, const TrainConfig& config) {
  std::vector<at::Tensor> decayed, not_decayed;
  for (const at::Tensor& p : params) (p.dim() >= 2 ? decayed : not_decayed).push_back(p);
  auto options = [&](double decay) {
    return std::make_unique<torch::optim::AdamWOptions>(torch::optim::AdamWOptions(config.lr)
                                                            .betas({config.beta1, config.beta2})
                                                            .eps(config.adam_eps)
                                                            .weight_decay(decay));
  };
  std::vector<torch::optim::OptimizerParamGroup> groups;
  groups.emplace_back(decayed, options(config.weight_decay));
  groups.emplace_back(not_decayed, options(0.0));
  return std::make_unique<torch::optim::AdamW>(std::move(groups));
}

}  // namespace seed::models
