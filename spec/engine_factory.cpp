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

models::LoadOptions load_options(const EngineOptions& o) {
  models::LoadOptions options;
  options.device = o.device;
  options.weights_dtype = o.weights_dtype;
  options.cpu_kernel = o.cpu_kernel;
  return options;
}

namespace {

// The tokenizer and RunSettings every engine starts from, after the checks
// that need no model.
struct TargetSide {
  std::shared_ptr<const models::Tokenizer> tokenizer;
  RunSettings settings;
};

TargetSide target_side(const EngineOptions& o) {
  const auto& names = engine_names();
  SEED_CHECK(std::find(names.begin(), names.end(), o.engine) != names.end(), kInvalidArgument)
      << "--engine: unknown engine '" << o.engine << "'; expected ar, ar-batch, sd, mcsd, seed or seed-batch";
  const bool speculative = o.engine != "ar" && o.engine != "ar-batch";
  SEED_CHECK(!speculative || !o.draft.empty(), kInvalidArgument)
      << "--draft: engine '" << o.engine << "' needs a draft model folder";
  SEED_CHECK(o.max_batch >= 1, kInvalidArgument) << "--max-batch: " << o.max_batch << " < 1";
  TargetSide t;
  if (std::filesystem::exists(std::filesystem::path(o.target) / "tokenizer.model")) {
    t.tokenizer = models::load_tokenizer(o.target);
  }
  t.settings.tokenizer = t.tokenizer.get();
  t.settings.eos = t.tokenizer ? t.tokenizer->eos_id() : -1;
  if (speculative) t.settings.k_config = draft_shape(o);
  return t;
}

std::unique_ptr<Target> load_target(const EngineOptions& o) {
  return std::make_unique<ModelTarget>(models::CausalLM::load(o.target, load_options(o)));
}

void check_vocabularies(const EngineOptions& o, int64_t draft_vocab, int64_t target_vocab) {
  SEED_CHECK(draft_vocab == target_vocab, kInvalidArgument)
      << "--draft: " << o.draft << " has a vocabulary of " << draft_vocab << " tokens, the target " << o.target
      << " has " << target_vocab << "; speculative decoding needs the same tokenizer";
}

// REQUIRES target_side(o) passed. Empty `drafters`: draft-model drafters here.
std::unique_ptr<Engine> build(const EngineOptions& o, TargetSide t, std::unique_ptr<Target> target,
                              std::vector<std::unique_ptr<Drafter>> drafters) {
  if (o.engine == "ar") return std::make_unique<Owning<SerialEngine>>(t.tokenizer, "ar", std::move(target), nullptr, t.settings);
  if (o.engine == "ar-batch") {
    return std::make_unique<Owning<LockstepEngine>>(t.tokenizer, std::move(target), t.settings, o.max_batch);
  }
  std::unique_ptr<models::CausalLM> draft;
  if (drafters.empty()) {
    draft = models::CausalLM::load(o.draft, load_options(o));
    check_vocabularies(o, draft->config().vocab_size, target->vocab_size());
  } else {
    // Only the vocabulary: the drafters hold (or are proxies for) the model.
    const models::ModelConfig config =
        models::ModelConfig::from_file((std::filesystem::path(o.draft) / "config.json").string());
    check_vocabularies(o, config.vocab_size, target->vocab_size());
  }
  if (o.engine == "sd" || o.engine == "mcsd") {
    return std::make_unique<Owning<SerialEngine>>(t.tokenizer, o.engine, std::move(target),
                                                  std::make_unique<DraftModelDrafter>(*draft), t.settings);
  }
  if (drafters.empty()) {
    SEED_CHECK(o.drafters >= 0, kInvalidArgument) << "--drafters: " << o.drafters << " < 0";
    for (int i = 0; i < std::max(o.drafters, 1); ++i) drafters.push_back(std::make_unique<DraftModelDrafter>(*draft));
  }
  const int max_batch = o.engine == "seed" ? 1 : o.max_batch;
  return std::make_unique<Owning<SeedEngine>>(t.tokenizer, o.engine, std::move(target), std::move(drafters),
                                              t.settings, max_batch, o.draft_threads);
}

void check_drafter_handles(const EngineOptions& o, const std::vector<std::unique_ptr<Drafter>>& drafters) {
  SEED_CHECK(o.engine == "seed" || o.engine == "seed-batch", kInvalidArgument)
      << "--engine: '" << o.engine << "' does not draft on drafter handles; use seed or seed-batch";
  SEED_CHECK(!drafters.empty(), kInvalidArgument) << "engine '" << o.engine << "' needs at least one drafter";
}

}  // namespace

std::unique_ptr<Engine> make_engine(const EngineOptions& o) {
  TargetSide t = target_side(o);
  return build(o, std::move(t), load_target(o), {});
}

std::unique_ptr<Engine> make_engine(const EngineOptions& o, std::vector<std::unique_ptr<Drafter>> drafters) {
  check_drafter_handles(o, drafters);
  TargetSide t = target_side(o);
  return build(o, std::move(t), load_target(o), std::move(drafters));
}

std::unique_ptr<Engine> make_engine(const EngineOptions& o, std::unique_ptr<Target> target,
                                    std::vector<std::unique_ptr<Drafter>> drafters) {
  SEED_CHECK(target != nullptr, kInvalidArgument) << "engine '" << o.engine << "' needs a target";
  if (!drafters.empty()) check_drafter_handles(o, drafters);
  TargetSide t = target_side(o);
  return build(o, std::move(t), std::move(target), std::move(drafters));
}

}  // namespace seed::spec
