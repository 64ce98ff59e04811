#include "spec/engine_factory.h"

#include <algorithm>
#include <filesystem>

#include "models/causal_lm.h"
#include "models/error.h"
#include "models/tokenizer.h"
#include "spec/draft_model_drafter.h"
#include "spec/lockstep_engine.h"
#include "spec/model_target.h"
#include "spec/seed_engine.h"
#include "spec/serial_engine.h"

namespace seed::spec {
namespace {

// Owns what the engine's RunSettings borrow.
template <typename EngineType>
class Owning : public EngineType {
 public:
  template <typename... Args>
  Owning(std::shared_ptr<const models::Tokenizer> tokenizer, Args&&... args)
      : EngineType(std::forward<Args>(args)...), tokenizer_(std::move(tokenizer)) {}

 private:
  std::shared_ptr<const models::Tokenizer> tokenizer_;
};

std::vector<int> draft_shape(const EngineOptions& o) {
  if (o.engine == "mcsd" && o.k_config.empty()) return {2, 2, 1};  // SEED appendix B
  if (!o.k_config.empty()) {
    for (int k : o.k_config) SEED_CHECK(k >= 1, kInvalidArgument) << "--k-config: entry " << k << " < 1";
    return o.k_config;
  }
  SEED_CHECK(o.draft_length >= 1, kInvalidArgument) << "--draft-length: " << o.draft_length << " < 1";
  return std::vector<int>(static_cast<size_t>(o.draft_length), 1);
}

}  // namespace

const std::vector<std::string>& engine_names() {
  static const std::vector<std::string> names = {"ar", "ar-batch", "sd", "mcsd", "seed", "seed-batch"};
  return names;
}

std::unique_ptr<Engine> make_engine(const EngineOptions& o) {
  const auto& names = engine_names();
  SEED_CHECK(std::find(names.begin(), names.end(), o.engine) != names.end(), kInvalidArgument)
      << "--engine: unknown engine '" << o.engine << "'; expected ar, ar-batch, sd, mcsd, seed or seed-batch";
  const bool speculative = o.engine != "ar" && o.engine != "ar-batch";
  SEED_CHECK(!speculative || !o.draft.empty(), kInvalidArgument)
      << "--draft: engine '" << o.engine << "' needs a draft model folder";

  const models::LoadOptions load{o.device};
  std::shared_ptr<models::CausalLM> target = models::CausalLM::load(o.target, load);
  std::shared_ptr<const models::Tokenizer> tokenizer;
  if (std::filesystem::exists(std::filesystem::path(o.target) / "tokenizer.model")) {
    tokenizer = models::load_tokenizer(o.target);
  }
  RunSettings settings;
  settings.tokenizer = tokenizer.get();
  settings.eos = tokenizer ? tokenizer->eos_id() : -1;
  auto model_target = std::make_unique<ModelTarget>(target);

  if (o.engine == "ar") {
    return std::make_unique<Owning<SerialEngine>>(tokenizer, "ar", std::move(model_target), nullptr, settings);
  }
  if (o.engine == "ar-batch") {
    SEED_CHECK(o.max_batch >= 1, kInvalidArgument) << "--max-batch: " << o.max_batch << " < 1";
    return std::make_unique<Owning<LockstepEngine>>(tokenizer, std::move(model_target), settings, o.max_batch);
  }

  std::unique_ptr<models::CausalLM> draft = models::CausalLM::load(o.draft, load);
  SEED_CHECK(draft->config().vocab_size == target->config().vocab_size, kInvalidArgument)
      << "--draft: " << o.draft << " has a vocabulary of " << draft->config().vocab_size << " tokens, the target "
      << o.target << " has " << target->config().vocab_size << "; speculative decoding needs the same tokenizer";
  settings.k_config = draft_shape(o);
  if (o.engine == "sd" || o.engine == "mcsd") {
    return std::make_unique<Owning<SerialEngine>>(tokenizer, o.engine, std::move(model_target),
                                                  std::make_unique<DraftModelDrafter>(*draft), settings);
  }
  SEED_CHECK(o.drafters >= 1, kInvalidArgument) << "--drafters: " << o.drafters << " < 1";
  SEED_CHECK(o.max_batch >= 1, kInvalidArgument) << "--max-batch: " << o.max_batch << " < 1";
  std::vector<std::unique_ptr<Drafter>> drafters;
  for (int i = 0; i < o.drafters; ++i) drafters.push_back(std::make_unique<DraftModelDrafter>(*draft));
  const int max_batch = o.engine == "seed" ? 1 : o.max_batch;
  return std::make_unique<Owning<SeedEngine>>(tokenizer, o.engine, std::move(model_target), std::move(drafters),
                                              settings, max_batch, o.draft_threads);
}

}  // namespace seed::spec
