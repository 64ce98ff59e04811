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
  DraftModelDrafter(std::shared_ptr<const models::CausalLM> model, models::KvCacheOptions cache_options, DraftTruncation cut,
                    LogitReads reads)
      : ModelDrafter("drafter", std::move(model), cache_options, cut, reads) {}

  void advance(uint64_t slot, const Verdict& verdict) override;

 private:
  std::vector<DraftTree> draft_side_by_side(const std::vector<DraftAsk>& asks) override;
  // How deep the slot's next draft goes: the ask's depth, its shape's and
  // what the draft model's context leaves (0: none).
  int depth_of(const DraftModelSlot& s, int max_depth) const;
  // What the slot's cache lacks: its unfed tokens, its cache sequence
  // started first on the longest prefix the cache holds.
  models::SequenceInput unfed_input(DraftModelSlot& s);
};

int DraftModelDrafter::depth_of(const DraftModelSlot& s, int max_depth) const {
  // Nodes of depth d sit at position accepted + d - 1; the last level is
  // drawn, never fed, so depth D needs positions < accepted + D - 1. A
  // draft model with a shorter context than the target drafts less (down to
  // nothing), never fails.
  const int64_t fits = model_->config().max_position_embeddings - s.accepted + 1;
  return static_cast<int>(std::min<int64_t>({max_depth, int64_t(s.settings.k_config.size()), fits}));
}

models::SequenceInput DraftModelDrafter::unfed_input(DraftModelSlot& s) {
  if (!s.started) {
    // Started here rather than in start(), so a slot started after another
    // with the same prompt, but proposed after it, reuses its prefix.
    const models::CachedStart start = cache_.create_with_prefix(s.unfed);
    s.main = start.sequence;
    s.started = true;
    s.unfed.erase(s.unfed.begin(), s.unfed.begin() + start.cached);
  }
  return {s.main, s.unfed, {}};
}

std::vector<DraftTree> DraftModelDrafter::draft_side_by_side(const std::vector<DraftAsk>& asks) {
  const models::DeviceStream::Scope on_stream(stream_);
  std::vector<DraftTree> drafts(asks.size());
  std::vector<DraftModelSlot*> slots;  // the asks that draft, in order
  std::vector<size_t> asked;           // their index in `asks`
  std::vector<TreeToGrow> trees;
  for (size_t i = 0; i < asks.size(); ++i) {
    DraftModelSlot& s = released_slot(asks[i].slot);
    s.main_path.clear();
    const int depth = depth_of(s, asks[i].max_depth);
    if (depth <= 0) continue;
    SEED_CHECK(!s.unfed.empty(), kInternal) << "drafter: slot " << asks[i].slot << " proposed twice without advance";
    slots.push_back(&s);
    asked.push_back(i);
    trees.push_back({0, &s.settings, s.accepted, depth});
  }
  if (slots.empty()) return drafts;
  const at::Tensor logits = contexts(slots, [this](DraftModelSlot& s) { return unfed_input(s); });
  for (size_t j = 0; j < slots.size(); ++j) {
    DraftModelSlot& s = *slots[j];
    s.unfed.clear();
    s.base = cache_.length(s.main);
    trees[j].main = s.main;
  }
  std::vector<GrownDraft> grown = grow(slots, trees, logits, true);
  for (size_t j = 0; j < slots.size(); ++j) {
    slots[j]->main_path = std::move(grown[j].main_path);
    drafts[asked[j]] = std::move(grown[j].tree);
  }
  return drafts;
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
                                                  models::KvCacheOptions cache_options, DraftTruncation cut,
                                                  LogitReads reads) {
  return std::make_unique<DraftModelDrafter>(std::move(model), cache_options, cut, reads);
}

}  // namespace seed::spec
