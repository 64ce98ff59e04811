// A target and a draft that agrees with it often but not always (the
// target's weights plus noise), written as model folders for make_engine.
#pragma once

#include <torch/torch.h>

#include <filesystem>
#include <string>

#include "models/causal_lm.h"
#include "tests/models/tiny_models.h"

namespace seed::testing {

struct ModelPair {
  std::string target, draft;
};

inline ModelPair write_model_pair(const std::filesystem::path& dir, int64_t vocab, double noise) {
  torch::NoGradGuard no_grad;
  models::ModelConfig config = models::testing::tiny_config("llama");
  config.vocab_size = vocab;
  ModelPair pair{(dir / "target").string(), (dir / "draft").string()};
  models::CausalLM::random(config, 11)->save(pair.target, torch::kFloat32);
  auto draft = models::CausalLM::random(config, 11);
  torch::manual_seed(5);
  for (at::Tensor& p : draft->weights().parameters()) p.add_(torch::randn_like(p) * noise * p.std());
  draft->save(pair.draft, torch::kFloat32);
  return pair;
}

}  // namespace seed::testing
