#include "spec/drafters/model/draft_model_drafter.h"

#include <cstdint>
#include <torch/torch.h>

#include <algorithm>
#include <numeric>
#include <optional>

#include "models/base/error.h"
#include "spec/drafters/model/draft_tree_growth.h"

namespace seed::spec {

struct DraftModelDrafter::Slot {
  models::SequenceId main = 0;
  bool started = false;        // `main` exists (from the first proposal on)
  DraftSettings settings;
  std::vector<int32_t> unfed;  // accepted tokens not yet in the cache
  int64_t accepted = 0;        // accepted tokens (in the cache or unfed)
  // The last proposal: cache length before it, the nodes fed on the main
  // sequence (its rank-0 path), and the forks its other branches used.
  int64_t base = 0;
  std::vector<int32_t> main_path;
  std::vector<models::SequenceId> forks;
};

DraftModelDrafter::DraftModelDrafter(std::shared_ptr<const models::CausalLM> model,
                                     models::KvCacheOptions cache_options, DraftTruncation cut)
    : model_(std::move(model)),
      cut_(cut),
      cache_(model_->make_cache(cache_options)),
      stream_(model_->tensor_options().device()) {
  SEED_CHECK(model_->shard().is_whole(), kInvalidArgument)
      << "drafter: the draft model is tp rank " << model_->shard().rank << " of " << model_->shard().size
      << "; drafters run whole models";
}

DraftModelDrafter::~DraftModelDrafter() = default;

DraftModelDrafter::Slot& DraftModelDrafter::slot_state(uint64_t slot) {
  const auto it = slots_.find(slot);
  SEED_CHECK(it != slots_.end(), kInvalidArgument) << "drafter: slot " << slot << " was not started";
  return it->second;
}

void DraftModelDrafter::start(uint64_t slot, const std::vector<int32_t>& tokens, const DraftSettings& settings) {
  const models::DeviceStream::Scope on_stream(stream_);
  check_draft_start("drafter", slot, tokens, settings);
  finish(slot);
  Slot s;
  s.settings = settings;
  s.unfed = tokens;
  s.accepted = static_cast<int64_t>(tokens.size());
  slots_.emplace(slot, std::move(s));
}

DraftTree DraftModelDrafter::propose(uint64_t slot, int max_depth) {
  const models::DeviceStream::Scope on_stream(stream_);
  Slot& s = slot_state(slot);
  release_forks(s);
  s.main_path.clear();
  const int64_t context = model_->config().max_position_embeddings;
  // Nodes of depth d sit at position accepted + d - 1; the last level is
  // drawn, never fed, so depth D needs positions < accepted + D - 1. A
  // draft model with a shorter context than the target drafts less (down to
  // nothing), never fails.
  const int64_t fits = context - s.accepted + 1;
  const int depth = static_cast<int>(std::min<int64_t>({max_depth, int64_t(s.settings.k_config.size()), fits}));
  if (depth <= 0) return {};

  SEED_CHECK(!s.unfed.empty(), kInternal) << "drafter: slot " << slot << " proposed twice without advance";
  if (!s.started) {
    // Started here rather than in start(), so a slot started after another
    // with the same prompt, but proposed after it, reuses its prefix.
    const models::CachedStart start = cache_.create_with_prefix(s.unfed);
    s.main = start.sequence;
    s.started = true;
    s.unfed.erase(s.unfed.begin(), s.unfed.begin() + start.cached);
  }
  const at::Tensor logits = model_->forward({{s.main, s.unfed, {}}}, cache_, models::LogitsFor::kLast);
  s.unfed.clear();
  s.base = cache_.length(s.main);
  GrownDraft grown = grow_draft_tree(*model_, cache_, s.main, logits, s.settings, cut_, s.accepted, depth, true);
  s.main_path = std::move(grown.main_path);
  s.forks = std::move(grown.forks);
  return std::move(grown.tree);
}

void DraftModelDrafter::advance(uint64_t slot, const Verdict& verdict) {
  const models::DeviceStream::Scope on_stream(stream_);
  Slot& s = slot_state(slot);
  release_forks(s);
  // Keep the accepted nodes the main sequence already holds; feed the rest.
  size_t kept = 0;
  while (kept < verdict.accepted.size() && kept < s.main_path.size() &&
         verdict.accepted[kept] == s.main_path[kept]) {
    ++kept;
  }
  if (!s.main_path.empty()) cache_.truncate(s.main, s.base + static_cast<int64_t>(kept));
  s.main_path.clear();
  s.unfed.insert(s.unfed.end(), verdict.tokens.begin() + static_cast<std::ptrdiff_t>(kept), verdict.tokens.end());
  s.accepted += static_cast<int64_t>(verdict.tokens.size());
}

void DraftModelDrafter::finish(uint64_t slot) {
  const models::DeviceStream::Scope on_stream(stream_);
  const auto it = slots_.find(slot);
  if (it == slots_.end()) return;
  release_forks(it->second);
  if (it->second.started) cache_.release(it->second.main);
  slots_.erase(it);
}

void DraftModelDrafter::release_forks(Slot& s) {
  for (models::SequenceId f : s.forks) cache_.release(f);
  s.forks.clear();
}

}  // namespace seed::spec
