#include "spec/lookahead/hidden_state_verifier.h"

#include <ATen/ATen.h>
#include <cstdint>
#include <torch/torch.h>

#include <optional>

#include "models/base/error.h"

namespace seed::spec {

HiddenStateVerifier::HiddenStateVerifier(std::shared_ptr<models::CausalLM> model,
                                         std::shared_ptr<const models::Tokenizer> tokenizer, double threshold)
    : model_(std::move(model)), tokenizer_(std::move(tokenizer)), threshold_(threshold) {
  SEED_CHECK(model_ && tokenizer_, kInvalidArgument) << "hidden step verifier: needs the target model and tokenizer";
  SEED_CHECK(threshold_ >= -1 && threshold_ <= 1, kInvalidArgument)
      << "hidden step verifier: threshold " << threshold_ << " is outside [-1, 1]";
}

bool HiddenStateVerifier::same(const std::string& target_step, const std::string& draft_step) const {
  return same_all({{target_step, draft_step}}).front();
}

std::vector<bool> HiddenStateVerifier::same_all(const std::vector<StepPair>& pairs) const {
  std::vector<bool> out;
  for (const double similarity : similarities(pairs)) out.push_back(similarity >= threshold_);
  return out;
}

std::vector<double> HiddenStateVerifier::similarities(const std::vector<StepPair>& pairs) const {
  // One forward pass over every step (the inference path, into a cache that
  // keeps each token's last-layer output), then each step's mean row.
  models::KvCacheOptions options;
  options.prefix_cache = false;
  options.hidden_layer = model_->config().num_hidden_layers - 1;
  models::KvCache cache = model_->make_cache(options);
  std::vector<models::SequenceInput> batch;
  std::vector<std::optional<models::SequenceId>> sequences;  // per step; none when empty
  for (const StepPair& pair : pairs) {
    for (const std::string* text : {&pair.target_step, &pair.draft_step}) {
      models::SequenceInput input;
      input.tokens = tokenizer_->encode(*text, false);
      if (input.tokens.empty()) {
        sequences.push_back(std::nullopt);
        continue;
      }
      input.sequence = cache.create();
      sequences.push_back(input.sequence);
      batch.push_back(std::move(input));
    }
  }
  if (!batch.empty()) {
    torch::NoGradGuard no_grad;
    model_->forward(batch, cache, models::LogitsFor::kLast);
  }
  const at::Tensor rows = cache.hidden_states().to(at::kCPU, at::kFloat);
  const auto mean_row = [&](const std::optional<models::SequenceId>& sequence) -> at::Tensor {
    if (!sequence) return at::zeros({rows.size(1)});
    std::vector<int64_t> slots;
    cache.append_slots(*sequence, slots);
    return rows.index_select(0, torch::tensor(slots)).mean(0);
  };
  std::vector<double> out;
  for (size_t i = 0; i < pairs.size(); ++i) {
    const std::optional<models::SequenceId>& a = sequences[2 * i];
    const std::optional<models::SequenceId>& b = sequences[2 * i + 1];
    if (!a || !b) {
      out.push_back(!a && !b ? 1.0 : 0.0);  // an empty step is only like an empty step
      continue;
    }
    out.push_back(at::cosine_similarity(mean_row(a), mean_row(b), 0, 1e-8).item<double>());
  }
  return out;
}

}  // namespace seed::spec
