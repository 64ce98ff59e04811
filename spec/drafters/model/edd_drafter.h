// EddDrafter: drafts with an EDD (Zheng & Wang 2025; shared/notes/edd-pct.md),
// a one-layer decoder that reads the target's own hidden states.
//
// The EDD's input at an accepted position is the target's hidden state
// there (a soft prompt, ModelConfig::edd_target_layer), and at the bonus
// token and the drafted nodes the token's embedding. With one layer, a
// hidden-state row's K/V depend on that row alone, so the slot's cache
// keeps them and each proposal computes only the rows new since the last:
// the hidden states the last verdict brought (Verdict::hidden), then the
// bonus token and the draft tree, whose K/V are dropped at advance() since
// the next verdict brings those positions' hidden states. Hidden-state
// rows are a function of the token prefix (the target's), so the cache
// shares them between slots by prefix as a draft model's; the token rows
// are never shared.
//
// A slot's first proposal, before the target has seen its prompt, is
// empty: that round decodes one token and brings the prompt's hidden states.
// A slot that arrives mid-stream (its drafter died and the engine moved it
// here) never gets the earlier positions' hidden states and drafts nothing.
// Otherwise as DraftModelDrafter: chains, fixed trees and pruned trees,
// greedy or sampled; one shared model, a cache per drafter.
#pragma once

#include <cstdint>
#include <map>
#include <memory>

#include "models/causal_lm.h"
#include "models/device_stream.h"
#include "spec/api/drafter.h"

namespace seed::spec {

class EddDrafter : public Drafter {
 public:
  // REQUIRES model->config().is_edd() and a whole model.
  // Sampled drafts are drawn from, and carry, `cut` applied to each
  // request's sampling (DraftTruncation).
  explicit EddDrafter(std::shared_ptr<const models::CausalLM> model, models::KvCacheOptions cache_options = {},
                      DraftTruncation cut = {});
  ~EddDrafter() override;

  void start(uint64_t slot, const std::vector<int32_t>& tokens, const DraftSettings& settings) override;
  DraftTree propose(uint64_t slot, int max_depth) override;
  // Throws kInvalidArgument when the verdict lacks the hidden states of the
  // positions the slot's drafts need (a target that keeps none).
  void advance(uint64_t slot, const Verdict& verdict) override;
  void finish(uint64_t slot) override;

 private:
  struct Slot;
  Slot& slot_state(uint64_t slot);
  void release_forks(Slot& s);

  std::shared_ptr<const models::CausalLM> model_;
  DraftTruncation cut_;
  models::KvCache cache_;
  // Its own CUDA stream, so drafters on their threads overlap with the
  // target and with each other on one GPU.
  models::DeviceStream stream_;
  std::map<uint64_t, Slot> slots_;
};

}  // namespace seed::spec
