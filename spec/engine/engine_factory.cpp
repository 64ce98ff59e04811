#include "spec/engine/engine_factory.h"

#include <cstdint>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <mutex>
#include <set>

#include <ATen/Parallel.h>
#include <spdlog/spdlog.h>

#include "models/causal_lm.h"
#include "models/base/error.h"
#include "models/device_memory.h"
#include "models/loaded_models.h"
#include "models/tokenizer.h"
#include "spec/drafters/drafter_registry.h"
#include "spec/engine/model_target.h"
#include "spec/engine/scheduled_engine.h"
#include "spec/engine/step_cost.h"
#include "spec/lookahead/lookahead_engine.h"

namespace seed::spec {
namespace {

// The config.json of the model folder `dir`.
models::ModelConfig config_of(const std::string& dir) {
  return models::ModelConfig::from_file((std::filesystem::path(dir) / "config.json").string());
}

}  // namespace

models::LoadOptions load_options(const EngineOptions& o) {
  models::LoadOptions options;
  options.device = o.device;
  options.weights_dtype = o.weights_dtype;
  options.cpu_kernel = o.cpu_kernel;
  options.cuda_graphs = o.cuda_graphs;
  return options;
}

// Whether `what` (a model folder, or a thing said of one) is told for the
// first time in this process (so that it is said once, not per engine).
bool first_told(const std::string& what) {
  static std::mutex mutex;
  static std::set<std::string> told;
  std::lock_guard<std::mutex> lock(mutex);
  return told.insert(what).second;
}

std::shared_ptr<models::CausalLM> load_model(const EngineOptions& o, const std::string& model_dir,
                                             const models::LoadOptions& load, const char* role) {
  // A large model takes minutes to load: say so before, and how long after.
  const auto loading = [&] {
    spdlog::info("{} {}: loading on {}", role, model_dir, load.device);
    return std::chrono::steady_clock::now();
  };
  const auto loaded_since = [&](std::chrono::steady_clock::time_point start) {
    spdlog::info("{} {}: loaded in {:.1f} s", role, model_dir,
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  };
  if (!o.loaded_models) {
    const auto start = loading();
    std::shared_ptr<models::CausalLM> model = models::CausalLM::load(model_dir, load);
    loaded_since(start);
    return model;
  }
  std::optional<std::chrono::steady_clock::time_point> start;
  models::LoadedModels::Loaded loaded = o.loaded_models->load(model_dir, load, [&] { start = loading(); });
  if (start) loaded_since(*start);
  if (loaded.reused) {
    // Said once a process at info: a sweep or `bench spec` reuses it for
    // every engine it makes.
    const auto level = first_told(std::string("reused ") + role + " " + model_dir) ? spdlog::level::info
                                                                                  : spdlog::level::debug;
    spdlog::log(level, "{} {}: reusing the model already loaded", role, model_dir);
  }
  return std::move(loaded.model);
}

models::LoadOptions draft_load_options(models::LoadOptions options, const std::string& target,
                                       const std::string& draft) {
  const models::ModelConfig draft_config = config_of(draft);
  const bool first = first_told(draft);
  // A large vocabulary's head can be most of a small draft's step.
  const int64_t head = draft_config.head_rows() * draft_config.hidden_size;
  const int64_t read = draft_config.num_parameters() -
                       (draft_config.tie_word_embeddings ? 0 : draft_config.vocab_size * draft_config.hidden_size);
  if (first && draft_config.draft_vocab_size == 0 && draft_config.vocab_size >= 32768 && 10 * head >= 3 * read) {
    spdlog::info("draft {}: its LM head over all {} tokens is {:.0f}% of the weights a draft step reads; "
                 "`seed convert --draft-vocab-size 32768 --corpus TEXT` keeps the rows of the tokens a corpus uses "
                 "most, and drafts stay exact",
                 draft, draft_config.vocab_size, 100.0 * static_cast<double>(head) / static_cast<double>(read));
  }
  if (options.weights_dtype) return options;
  const std::string target_dtype = config_of(target).torch_dtype;
  if ((target_dtype == "bfloat16" || target_dtype == "float16") && draft_config.torch_dtype == "float32") {
    options.weights_dtype = models::parse_weight_dtype(target_dtype, target + "/config.json torch_dtype");
    if (first) spdlog::info("draft {} (stored in float32) is held in {}, the target's dtype", draft, target_dtype);
  }
  return options;
}

models::LoadOptions draft_load_options(const EngineOptions& o) {
  return draft_load_options(load_options(o), o.target, o.draft);
}

models::KvCacheOptions kv_cache_options(const EngineOptions& o, int caches) {
  SEED_CHECK(o.kv_cache_mb >= 0, kInvalidArgument) << "--kv-cache-mb: " << o.kv_cache_mb << " < 0";
  models::KvCacheOptions cache;
  cache.prefix_cache = o.prefix_cache;
  constexpr int64_t kMiB = int64_t{1} << 20;
  if (o.kv_cache_mb > 0) {
    cache.max_bytes = o.kv_cache_mb * kMiB;
  } else {
    // Without a bound, cached prefixes would fill a card until an
    // allocation failed midway through a run.
    const c10::Device device(o.device);
    const int sharing = std::max(caches, 1) * (device.is_cpu() ? std::max(o.host_processes, 1) : 1);
    cache.max_bytes = std::max<int64_t>(models::available_memory_bytes(device) / 2 / sharing, 64 * kMiB);
  }
  return cache;
}

models::KvCacheOptions target_cache_options(const EngineOptions& o, int caches) {
  models::KvCacheOptions cache = kv_cache_options(o, caches);
  if (!o.engine.drafts() || !o.drafter.needs_draft_model() || o.draft.empty()) return cache;
  const models::ModelConfig draft = config_of(o.draft);
  if (!draft.is_edd()) return cache;
  const models::ModelConfig target = config_of(o.target);
  SEED_CHECK(draft.hidden_size == target.hidden_size, kInvalidArgument)
      << "--draft: the EDD " << o.draft << " reads hidden states of width " << draft.hidden_size << ", the target "
      << o.target << " has width " << target.hidden_size;
  SEED_CHECK(draft.edd_target_layer < target.num_hidden_layers, kInvalidArgument)
      << "--draft: the EDD " << o.draft << " reads layer " << draft.edd_target_layer << ", the target " << o.target
      << " has " << target.num_hidden_layers << " layers";
  cache.hidden_layer = draft.edd_target_layer;
  return cache;
}

namespace {

// The paper's PCT bounds: the top 5 children, to depth 10.
constexpr int kPrunedTreeWidth = 5;
constexpr int kPrunedTreeDepth = 10;

std::vector<int> draft_shape(const EngineOptions& o) {
  if (o.tree == kPrunedTree && o.k_config.empty()) return std::vector<int>(kPrunedTreeDepth, kPrunedTreeWidth);
  if (o.engine.tree_drafts() && o.k_config.empty()) return {2, 2, 1};  // SEED appendix B
  if (!o.k_config.empty()) {
    for (int k : o.k_config) SEED_CHECK(k >= 1, kInvalidArgument) << "--k-config: entry " << k << " < 1";
    return o.k_config;
  }
  SEED_CHECK(o.draft_length >= 1, kInvalidArgument) << "--draft-length: " << o.draft_length
                                                    << "; expected 1 or more (to draft nothing, --engine ar-batch)";
  return std::vector<int>(static_cast<size_t>(o.draft_length), 1);
}

// The most children any node of each depth has: a tree's k_config.
std::vector<int> widest_per_depth(const StaticTree& tree) {
  const std::vector<int> depths = tree.depths();
  std::vector<int> children(tree.parents.size() + 1, 0);  // [0] = the prefix
  for (const int32_t parent : tree.parents) ++children[static_cast<size_t>(parent + 1)];
  std::vector<int> widest(static_cast<size_t>(tree.depth()), 0);
  for (size_t node = 0; node <= tree.parents.size(); ++node) {
    const int depth = node == 0 ? 0 : depths[node - 1];
    if (depth < tree.depth()) {
      int& w = widest[static_cast<size_t>(depth)];
      w = std::max(w, children[node]);
    }
  }
  return widest;
}

// The RunSettings every engine starts from (it owns the tokenizer), after
// the checks that need no model.
RunSettings run_settings(const EngineOptions& o) {
  SEED_CHECK(!o.engine.drafts() || !o.drafter.needs_draft_model() || !o.draft.empty(), kInvalidArgument)
      << "--draft: engine '" << o.engine.name() << "' needs a draft model folder";
  SEED_CHECK(o.max_batch >= 1, kInvalidArgument) << "--max-batch: " << o.max_batch << " < 1";
  if (o.lookahead) {
    SEED_CHECK(!o.draft.empty(), kInvalidArgument) << "--lookahead: needs --draft, the model that drafts steps";
    SEED_CHECK(o.step_verifier != nullptr, kInvalidArgument) << "--lookahead: no step verifier to judge steps";
  }
  RunSettings settings = model_run_settings(o.target, o.chat_system, o.chat_variables);
  if (o.engine.drafts()) settings.k_config = draft_shape(o);
  settings.adaptive_draft_length = o.adaptive_draft_length;
  SEED_CHECK(!o.sample_drafts || o.engine.drafts(), kInvalidArgument)
      << "--sampled-drafts: engine '" << o.engine.name() << "' does not draft";
  SEED_CHECK(!o.sample_drafts || o.drafter.has_draft_distribution(), kInvalidArgument)
      << "--sampled-drafts: the " << o.drafter.name()
      << " drafter has no draft distribution to draw from; use the model or stand drafter";
  settings.sample_drafts = o.sample_drafts;
  if (o.tree == kPrunedTree) {
    SEED_CHECK(o.engine.drafts(), kInvalidArgument)
        << "--tree pct: engine '" << o.engine.name() << "' does not draft";
    SEED_CHECK(o.drafter.needs_draft_model(), kInvalidArgument)
        << "--tree pct: the " << o.drafter.name()
        << " drafter has no draft probabilities to prune by; pruned trees need a draft model";
    SEED_CHECK(o.pct_threshold >= 0.0f && o.pct_threshold <= 1.0f, kInvalidArgument)
        << "--pct-threshold: " << o.pct_threshold << " outside [0, 1] (0: measured)";
    SEED_CHECK(o.pct_epsilon >= 0.0f && o.pct_epsilon <= 1.0f, kInvalidArgument)
        << "--pct-epsilon: " << o.pct_epsilon << " outside [0, 1]";
    settings.pruned_tree = PrunedTree{o.pct_threshold, o.pct_epsilon};
  }
  return settings;
}

// Caches in this process: the target's and one per draft-model drafter.
int cache_count(const EngineOptions& o) {
  if (!o.engine.drafts()) return 1;
  return 1 + (o.engine.drafter_pool() ? std::max(o.drafters, 1) : 1);
}

std::unique_ptr<Target> load_target(const EngineOptions& o) {
  const int top_k = o.engine.drafts() ? o.drafter.target_top_k() : 0;
  std::shared_ptr<models::CausalLM> model = load_model(o, o.target, load_options(o), "--target");
  const models::ModelConfig& config = model->config();
  if (config.draft_vocab_size > 0 && first_told(o.target)) {
    spdlog::warn("--target: {} scores {} of its {} tokens (a draft's head, draft_vocab_size in its config.json); "
                 "it never writes the others",
                 o.target, config.draft_vocab_size, config.vocab_size);
  }
  return std::make_unique<ModelTarget>(std::move(model), target_cache_options(o, cache_count(o)), top_k,
                                       o.logit_reads);
}

void check_vocabularies(const EngineOptions& o, int64_t draft_vocab, int64_t target_vocab) {
  SEED_CHECK(draft_vocab == target_vocab, kInvalidArgument)
      << "--draft: " << o.draft << " has a vocabulary of " << draft_vocab << " tokens, the target " << o.target
      << " has " << target_vocab << "; speculative decoding needs the target's tokenizer: pass a --draft that "
      << "shares it, or an engine that does not draft (--engine ar-batch)";
}

// A pruned tree's thresholds left to measure (expand 0) on these handles:
// a node expands when its path confidence pays for a draft step, and stays
// when it pays for its share of the target's forward (at least epsilon).
void measure_pruned_tree(RunSettings& settings, Target& target, Drafter& drafter) {
  if (!settings.pruned_tree || settings.pruned_tree->expand > 0.0f) return;
  PrunedTree& rule = *settings.pruned_tree;
  const StepCost cost = measure_step_cost(target, drafter);
  // Never above 1: a node at confidence 1 always expands.
  rule.expand = static_cast<float>(std::clamp(cost.draft_ratio, 1e-3, 1.0));
  rule.prune = std::max(rule.prune, static_cast<float>(std::min(cost.verify_token_ratio, 1.0)));
  spdlog::info("pruned trees: a node expands at path confidence >= {:.3f} and stays at >= {:.3f} (target step "
               "{:.3f} ms, draft step {:.3f} ms, each verified node {:.3f} ms)",
               rule.expand, rule.prune, cost.target_s * 1e3, cost.draft_s * 1e3, cost.verify_token_s * 1e3);
}

// REQUIRES run_settings(o) passed. Empty `drafters`: draft-model drafters here.
std::unique_ptr<ScheduledEngine> build(const EngineOptions& o, RunSettings settings, std::unique_ptr<Target> target,
                              std::vector<std::unique_ptr<Drafter>> drafters) {
  const EngineKind kind = o.engine;
  const auto batch_scheduler = [&] {
    return Scheduler(o.schedule.value_or(SchedulePolicy::kBatch), static_cast<size_t>(o.max_batch));
  };
  if (!kind.drafts()) {
    if (kind.batched_verify()) return ScheduledEngine::lockstep(std::move(target), settings, batch_scheduler());
    return ScheduledEngine::serial(kind.name(), std::move(target), nullptr, settings);
  }
  // One draft model (one packed copy of its weights), or one set of
  // STAND's or ADED's tables, for every drafter.
  DrafterResources resources;
  if (!o.drafter.needs_draft_model()) {
    if (!o.tree.empty()) {
      resources.tree = StaticTree::load(o.tree);
      SEED_CHECK(resources.tree->size() > 0, kInvalidArgument) << "--tree: " << o.tree << " has no nodes";
      // The engines bound drafts by the shape's depth; the tree is the shape.
      settings.k_config = widest_per_depth(*resources.tree);
    }
    resources.tables = std::make_shared<NgramStore>();
    resources.vocab = target->vocab_size();
    if (o.drafter == DrafterKind::kAded) {
      resources.trigrams = std::make_shared<TrigramStore>(std::make_shared<const TrigramTable>(
          o.trigrams.empty() ? TrigramTable() : TrigramTable::load(o.trigrams)));
    }
  } else if (drafters.empty()) {
    resources.draft_model = load_model(o, o.draft, draft_load_options(o), "--draft");
    resources.draft_cache = kv_cache_options(o, cache_count(o));
    resources.draft_cut = o.draft_cut;
    resources.draft_reads = o.logit_reads;
    check_vocabularies(o, resources.draft_model->config().vocab_size, target->vocab_size());
  } else {
    // Only the vocabulary: the drafters hold (or are proxies for) the model.
    check_vocabularies(o, config_of(o.draft).vocab_size, target->vocab_size());
  }
  if (!kind.drafter_pool()) {
    std::unique_ptr<Drafter> drafter = make_drafter(o.drafter, resources);
    measure_pruned_tree(settings, *target, *drafter);
    return ScheduledEngine::serial(kind.name(), std::move(target), std::move(drafter), settings);
  }
  if (drafters.empty()) {
    SEED_CHECK(o.drafters >= 0, kInvalidArgument) << "--drafters: " << o.drafters << " < 0";
    for (int i = 0; i < std::max(o.drafters, 1); ++i) drafters.push_back(make_drafter(o.drafter, resources));
  }
  measure_pruned_tree(settings, *target, *drafters.front());
  // seed: fcfs verifies one proposal of each caller per forward, up to
  // max_batch (scheduler.h); priority, one proposal per forward.
  const SchedulePolicy policy = o.schedule.value_or(SchedulePolicy::kFcfs);
  const Scheduler scheduler =
      kind.batched_verify()
          ? batch_scheduler()
          : Scheduler(policy, policy == SchedulePolicy::kFcfs ? static_cast<size_t>(o.max_batch) : 1);
  return ScheduledEngine::seed(kind.name(), std::move(target), std::move(drafters), settings, scheduler,
                               o.draft_threads);
}

void check_drafter_handles(const EngineOptions& o, const std::vector<std::unique_ptr<Drafter>>& drafters) {
  SEED_CHECK(o.engine.drafter_pool(), kInvalidArgument)
      << "--engine: '" << o.engine.name() << "' does not draft on drafter handles; use seed or seed-batch";
  SEED_CHECK(!drafters.empty(), kInvalidArgument) << "engine '" << o.engine.name() << "' needs at least one drafter";
}

// `target` as it is, or under step speculation where o.lookahead asks.
std::unique_ptr<Engine> with_lookahead(const EngineOptions& o, std::unique_ptr<Engine> target) {
  if (!o.lookahead) return target;
  LookaheadSettings steps = *o.lookahead;
  steps.draft_device = o.device;
  if (steps.async && at::get_num_threads() > 1) {
    // The draft's thread takes one of the target's cores.
    at::set_num_threads(at::get_num_threads() - 1);
  }
  std::unique_ptr<StepVerifier> verifier = o.step_verifier(*target, o);
  EngineOptions drafting = autoregressive_options(o, o.draft);
  drafting.weights_dtype = draft_load_options(o).weights_dtype;
  return std::make_unique<LookaheadEngine>(make_engine(drafting), std::move(target),
                                           model_run_settings(o.target, o.chat_system, o.chat_variables), steps, std::move(verifier));
}

}  // namespace

EngineOptions autoregressive_options(const EngineOptions& o, const std::string& model) {
  EngineOptions out = o;
  out.engine = EngineKind::kArBatch;
  out.target = model;
  out.tree.clear();
  out.lookahead.reset();
  out.step_verifier = nullptr;
  return out;
}

void check_draft_vocabulary(const EngineOptions& o) {
  // No draft at all is run_settings' error to name.
  if (!o.engine.drafts() || !o.drafter.needs_draft_model() || o.draft.empty()) return;
  check_vocabularies(o, config_of(o.draft).vocab_size, config_of(o.target).vocab_size);
}

std::unique_ptr<Engine> make_engine(const EngineOptions& o) {
  check_draft_vocabulary(o);
  RunSettings settings = run_settings(o);
  return with_lookahead(o, build(o, std::move(settings), load_target(o), {}));
}

std::unique_ptr<Engine> make_engine(const EngineOptions& o, std::vector<std::unique_ptr<Drafter>> drafters) {
  check_drafter_handles(o, drafters);
  check_draft_vocabulary(o);
  RunSettings settings = run_settings(o);
  return with_lookahead(o, build(o, std::move(settings), load_target(o), std::move(drafters)));
}

std::unique_ptr<Engine> make_engine(const EngineOptions& o, std::unique_ptr<Target> target,
                                    std::vector<std::unique_ptr<Drafter>> drafters) {
  SEED_CHECK(target != nullptr, kInvalidArgument) << "engine '" << o.engine.name() << "' needs a target";
  if (!drafters.empty()) check_drafter_handles(o, drafters);
  RunSettings settings = run_settings(o);
  return with_lookahead(o, build(o, std::move(settings), std::move(target), std::move(drafters)));
}

}  // namespace seed::spec
