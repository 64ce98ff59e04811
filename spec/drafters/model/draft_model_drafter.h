// DraftModelDrafter: a small causal LM that drafts chains or token trees.
//
// Per slot it keeps a KV-cache sequence of the accepted tokens. A proposal
// feeds the tokens accepted since the last one, then grows the tree level
// by level: every node of a level is drawn from the draft distribution q at
// its parent's context, and (unless it is the last level) fed back in one
// batched forward to get q at its own context. A node with several children
// forks its cache sequence (copy-on-write, so siblings share the prefix);
// the first child continues its parent's sequence, so the rank-0 path of
// the tree lies on the slot's main sequence and, when the verifier accepts
// along it (always, for chains), nothing is recomputed.
//
// A slot's first proposal starts its cache sequence from the longest prefix
// of its tokens that the drafter's KV cache holds (KvCache's prefix table),
// so the requests of one search state, and siblings, prefill once per drafter.
//
// The draft model is shared: the drafters of one engine (one per worker
// thread) hold the same immutable CausalLM, and so one copy of its packed
// weights; each drafter owns only its KV cache and slots.
#pragma once

#include <cstdint>
#include <map>
#include <memory>

#include "models/causal_lm.h"
#include "models/device_stream.h"
#include "spec/api/drafter.h"

namespace seed::spec {

class DraftModelDrafter : public Drafter {
 public:
  // Shares `model` (REQUIRES a whole model, not a tensor-parallel shard) and
  // owns its KV cache, so drafters built from one model may run on
  // different threads (CausalLM::forward is const and thread-safe).
  // Sampled drafts are drawn from, and carry, `cut` applied to each
  // request's sampling (DraftTruncation).
  explicit DraftModelDrafter(std::shared_ptr<const models::CausalLM> model, models::KvCacheOptions cache_options = {},
                             DraftTruncation cut = {});
  ~DraftModelDrafter() override;

  void start(uint64_t slot, const std::vector<int32_t>& tokens, const DraftSettings& settings) override;
  DraftTree propose(uint64_t slot, int max_depth) override;
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
