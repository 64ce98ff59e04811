#include "spec/drafters/model/draft_model_drafter.h"

#include <cstdint>
#include <torch/torch.h>

#include <algorithm>
#include <numeric>
#include <optional>

#include "models/base/error.h"
#include "spec/drafters/model/model_drafter.h"

namespace seed::spec {
namespace {

// What the drafter keeps per slot.
struct DraftModelSlot : ModelSlot {
  explicit DraftModelSlot(const std::vector<int32_t>& tokens)
      : unfed(tokens), accepted(static_cast<int64_t>(tokens.size())) {}
  std::vector<int32_t> unfed;  // accepted tokens not yet in the cache
  int64_t accepted = 0;        // accepted tokens (in the cache or unfed)
  // The last proposal: cache length before it and the nodes fed on the
  // main sequence (its rank-0 path).
  int64_t base = 0;
  std::vector<int32_t> main_path;
};

class DraftModelDrafter : public ModelDrafter<DraftModelSlot> {
 public:
  DraftModelDrafter(std::shared_ptr<const models::CausalLM> model, models::KvCacheOptions cache_options, DraftTruncation cut)
      : ModelDrafter("drafter", std::move(model), cache_options, cut) {}

  DraftTree propose(uint64_t slot, int max_depth) override;
  void advance(uint64_t slot, const Verdict& verdict) override;
};

DraftTree DraftModelDrafter::propose(uint64_t slot, int max_depth) {
  const models::DeviceStream::Scope on_stream(stream_);
  DraftModelSlot& s = released_slot(slot);
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
  GrownDraft grown = grow(s, logits, s.accepted, depth, true);
  s.main_path = std::move(grown.main_path);
  return std::move(grown.tree);
}

void DraftModelDrafter::advance(uint64_t slot, const Verdict& verdict) {
  const models::DeviceStream::Scope on_stream(stream_);
  DraftModelSlot& s = released_slot(slot);
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

}  // namespace

std::unique_ptr<Drafter> make_draft_model_drafter(std::shared_ptr<const models::CausalLM> model,
                                                  models::KvCacheOptions cache_options, DraftTruncation cut) {
  return std::make_unique<DraftModelDrafter>(std::move(model), cache_options, cut);
}

}  // namespace seed::spec
