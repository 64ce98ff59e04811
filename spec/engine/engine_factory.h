// Builds an Engine by name from model folders: what `seed run` and
// `seed bench spec` call. Torch-free header (models are loaded inside).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/cpu_kernel.h"
#include "spec/api/drafter.h"
#include "spec/api/drafter_kind.h"
#include "spec/api/engine.h"
#include "spec/engine/logit_reads.h"
#include "spec/api/engine_kind.h"
#include "spec/api/target.h"
#include "spec/engine/scheduler.h"
#include "spec/lookahead/lookahead_settings.h"
#include "spec/lookahead/step_verifier.h"

namespace seed::models {
struct LoadOptions;
struct KvCacheOptions;
class CausalLM;
class LoadedModels;
}

namespace seed::spec {

class ScheduledEngine;

inline constexpr const char* kPrunedTree = "pct";

struct EngineOptions;

// Makes the step verifier of a lookahead engine over `target`, the engine
// that writes the target's steps (a judge may ask it; it outlives the
// verifier), from the options make_engine was given.
using StepVerifierMaker =
    std::function<std::unique_ptr<StepVerifier>(Engine& target, const EngineOptions& options)>;

struct EngineOptions {
  EngineKind engine = EngineKind::kSeed;
  std::string target;  // HF model folder (config.json, safetensors, tokenizer)
  std::string draft;   // HF model folder; needed by engines that draft with DrafterKind::kModel
  // What drafts for the engines that draft (drafter_kind.h).
  DrafterKind drafter = DrafterKind::kModel;
  // kStand: a static tree file (StaticTree::load); empty: the draft shape.
  // kPrunedTree ("pct"), for a draft model: pruned candidate trees
  // (PrunedTree, drafter.h) bounded by k_config (empty: the draft's top 5
  // at each of 10 depths), expanding at path confidence >= pct_threshold
  // and pruned below pct_epsilon. pct_threshold 0: both measured at start
  // (spec/engine/step_cost.h): the time of a draft step over a target step, and
  // epsilon raised to what a verified node adds to a target step.
  std::string tree;
  float pct_threshold = 0;
  float pct_epsilon = 0.01f;
  // kAded: a tri-gram table file (`seed trigrams`, TrigramTable::load);
  // empty: each group's table learns from the target's outputs alone.
  std::string trigrams;
  std::string device = "cpu";
  // The dtype the models' weights keep in memory (unset: as stored; on a
  // GPU also the activations and KV cache) and the CPU matrix kernel
  // (models/cpu_kernel.h).
  std::optional<models::WeightDtype> weights_dtype;
  models::CpuKernel cpu_kernel = models::best_cpu_kernel();
  // Where acceptance reads the target's logits (ModelTarget's LogitReads),
  // and draft models theirs (grow_draft_trees).
  LogitReads logit_reads = LogitReads::kAuto;
  bool cuda_graphs = true;  // GPU: forwards replay CUDA graphs (models::LoadOptions::cuda_graphs)
  // Draft shape: children per node at each depth. sd and seed use a chain of
  // `draft_length` (k_config all ones); mcsd (and seed with tree drafts) use
  // k_config, e.g. {2, 2, 1} (SEED appendix B).
  int draft_length = 4;
  std::vector<int> k_config;  // empty: a chain of draft_length
  // Chains: draft_length is the longest draft, and each request drafts
  // what the measured acceptance and costs make best, down to none
  // (RunSettings::adaptive_draft_length); false: always draft_length.
  bool adaptive_draft_length = true;
  // Sampled requests draw their drafts from the draft's q, which the
  // verifier tests by rejection sampling (RunSettings::sample_drafts);
  // false: they propose q's winner of the target's race (verifier.h), and
  // keep sampling's own tokens.
  bool sample_drafts = false;
  // Draft models: the q' sampled drafts are drawn from and carry.
  DraftTruncation draft_cut;
  // drafter_pool kinds: drafter threads (sequences are assigned
  // round-robin); 0: one. `seed` sizes it to the machine
  // (launch/thread_plan.h).
  int drafters = 0;
  int max_batch = 16;         // proposals per target forward: batched_verify kinds, and seed's fcfs across callers
  // seed and batched kinds: what each target forward verifies
  // (spec/engine/scheduler.h); unset: fcfs for seed, batch for seed-batch and ar-batch.
  std::optional<SchedulePolicy> schedule;
  int draft_threads = 1;      // intra-op threads of each drafter
  // KV caches of the target and of each draft model: share prompt prefixes
  // by content (models/kv_cache.h), and the most each may hold in MiB; 0
  // sizes them from the device's memory available at start
  // (kv_cache_options), on the host shared with the `host_processes` of
  // this job there.
  bool prefix_cache = true;
  int64_t kv_cache_mb = 0;
  // Set: text prompts are chats, rendered by the target's chat template as a
  // system turn (this text; "" for none) and the prompt as the user's turn.
  std::optional<std::string> chat_system;
  nlohmann::ordered_json chat_variables = nlohmann::ordered_json::object();  // the template's, beside the turns
  // Set: step-level speculation (spec/lookahead/lookahead_engine.h) over the
  // engine the rest of these options make: `draft` writes steps
  // autoregressively (autoregressive_options), `step_verifier` (required)
  // judges them.
  std::optional<LookaheadSettings> lookahead;
  StepVerifierMaker step_verifier;
  // Set: the target and draft models load through it, and later engines
  // given the same one reuse them (the points of a sweep); null: each
  // engine loads its own.
  std::shared_ptr<models::LoadedModels> loaded_models;
  // Processes of the job on this host (mpirun's local size), which share
  // its memory with this one.
  int host_processes = 1;
};

// The options of an ar-batch engine over `model` in this process, with
// the models' device, weights, kernel and caches of `options` and no step
// speculation: what drafts a lookahead engine's steps, and what a judge
// model runs on.
EngineOptions autoregressive_options(const EngineOptions& options, const std::string& model);

// How the engines load their models: device, weight dtype, kernel.
models::LoadOptions load_options(const EngineOptions& options);

// The model of `model_dir` with `load`, as the engines get theirs: the one
// options.loaded_models holds where an earlier engine loaded it, else
// loaded here (and held there, where set). `role` names the model in the
// log ("--target", "the PRM"). Throws what CausalLM::load throws.
std::shared_ptr<models::CausalLM> load_model(const EngineOptions& options, const std::string& model_dir,
                                             const models::LoadOptions& load, const char* role);

// `options` for the draft model folder `draft` of the target folder
// `target`: with no weights dtype set, a draft stored in float32 beside a
// target stored in bfloat16 or float16 (config.json's torch_dtype) is held
// in the target's dtype, as vLLM holds a draft in its target's: a draft
// step then reads half the bytes and, on a CPU with bfloat16 products,
// multiplies at their rate. Drafts are verified exactly whatever their
// precision. A draft is never widened. Throws what reading either
// config.json throws.
models::LoadOptions draft_load_options(models::LoadOptions options, const std::string& target,
                                       const std::string& draft);
// How the engines load the draft model: the above for load_options.
models::LoadOptions draft_load_options(const EngineOptions& options);

// The KV cache of one of `caches` models in this process: kv_cache_mb each,
// or, with 0, half the device's memory available now (after the weights
// loaded before it) shared among them, and on the CPU among the job's
// processes on this host too. Throws kInvalidArgument naming --kv-cache-mb
// for a negative budget.
models::KvCacheOptions kv_cache_options(const EngineOptions& options, int caches);

// The target's KV cache for these options: kv_cache_options, keeping the
// hidden states of the layer an EDD draft reads (ModelConfig::is_edd). Throws
// kInvalidArgument naming --draft when the EDD does not fit the target
// (another width, or a layer the target lacks).
models::KvCacheOptions target_cache_options(const EngineOptions& options, int caches);

// Throws kInvalidArgument naming --draft when an engine that drafts with a
// draft model is given one whose config.json has another vocabulary size
// than the target's: read from the two folders, before either loads.
void check_draft_vocabulary(const EngineOptions& options);

// Throws seed::Error: kInvalidArgument naming the option (no draft for an
// engine that drafts with a draft model or for step speculation, k_config
// entry < 1, a malformed --tree file, a pruned tree for an engine that does
// not draft or a drafter without probabilities, or with thresholds outside
// [0, 1], lookahead without a step verifier), what loading a --trigrams
// file throws, what the step verifier's maker throws, and what loading the
// models throws (naming the file at fault), kInvalidArgument if the two
// models' vocabularies differ.
std::unique_ptr<Engine> make_engine(const EngineOptions& options);

// As above, but an engine with a drafter pool drafts with the given drafters
// (say, proxies for draft ranks under mpirun) instead of draft-model
// threads; only the draft's config.json is read (its vocabulary must match).
// REQUIRES options.engine.drafter_pool(), drafters non-empty.
std::unique_ptr<Engine> make_engine(const EngineOptions& options, std::vector<std::unique_ptr<Drafter>> drafters);

// As above, but every engine verifies on `target` (say, a proxy for a
// tensor-parallel target group under mpirun): the target model is not
// loaded here, only its tokenizer. Empty `drafters`: drafters over the
// draft model, as the first overload builds them; otherwise as the second.
std::unique_ptr<Engine> make_engine(const EngineOptions& options, std::unique_ptr<Target> target,
                                    std::vector<std::unique_ptr<Drafter>> drafters);

}  // namespace seed::spec
