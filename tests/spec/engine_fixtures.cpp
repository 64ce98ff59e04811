#include "tests/spec/engine_fixtures.h"

#include <torch/torch.h>

#include "models/causal_lm.h"
#include "tests/models/tiny_models.h"

namespace seed::testing {

ModelPair write_model_pair(const std::filesystem::path& dir, int64_t vocab, double noise) {
  torch::NoGradGuard no_grad;
  models::ModelConfig config = models::testing::tiny_config("llama");
  config.vocab_size = vocab;
  ModelPair pair{(dir / "target").string(), (dir / "draft").string()};
  models::CausalLM::random(config, 11)->save(pair.target, torch::kFloat32);
  auto draft = models::CausalLM::random(config, 11, models::testing::keeping_parameters());
  torch::manual_seed(5);
  for (at::Tensor& p : draft->weights().parameters()) p.add_(torch::randn_like(p) * noise * p.std());
  draft->save(pair.draft, torch::kFloat32);
  return pair;
}

std::string write_edd(const std::string& target_dir, const std::filesystem::path& dir, int64_t layer) {
  torch::NoGradGuard no_grad;
  auto target = models::CausalLM::load(target_dir, models::testing::keeping_parameters());
  models::ModelConfig config = target->config();
  config.num_hidden_layers = 1;
  config.edd_target_layer = layer;
  models::LlamaWeights weights = target->weights();
  weights.layers = {target->weights().layers.back()};
  models::CausalLM(config, weights, target->tensor_options()).save(dir.string(), torch::kFloat32);
  return dir.string();
}

}  // namespace seed::testing
