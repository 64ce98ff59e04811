// Target: the model that verifies drafts (docs/architecture.md, "One request, end to end"). One forward verifies
// the drafts of every item in a batch; the engines call it from one thread.
//
// The engines see the target only through this handle, so it can be a model
// in this process (ModelTarget) or the leader of a tensor-parallel target
// group under mpirun. Per-slot state: the target's KV cache of the accepted
// tokens, except the newest ones, which it keeps pending and feeds at the
// front of the next forward (so a round costs exactly one forward: the
// pending tokens, then the draft tree).
#pragma once

#include <cstdint>
#include <vector>

#include "models/base/sampling.h"
#include "spec/api/engine.h"
#include "spec/api/verifier.h"

namespace seed::spec {

struct TargetSettings {
  SamplingParams sampling;  // p is this transformation of the target logits
  uint64_t seed = 0;        // the request's random stream
  uint64_t stream = 0;
};

struct VerifyItem {
  uint64_t slot = 0;
  const DraftTree* draft = nullptr;  // borrowed for the call; may be empty
};

class Target {
 public:
  virtual ~Target() = default;
  virtual int64_t vocab_size() const = 0;
  virtual int64_t max_positions() const = 0;  // the model's context
  // Starts `slot` with its prompt (non-empty); nothing runs until verify().
  virtual void start(uint64_t slot, const std::vector<int32_t>& prompt, const TargetSettings& settings) = 0;
  // How deep a draft for `slot` may be so that the next verify() fits the
  // context; -1 when not even the pending tokens fit (the sequence is full).
  virtual int64_t room(uint64_t slot) const = 0;
  // One forward over every item (pending tokens + draft tree), then the
  // verifier's rule per item with the item's settings. Verdicts in item
  // order. Each slot's cache then holds its accepted path; the bonus token
  // is pending. REQUIRES each slot at most once, draft depth <= room(slot).
  virtual std::vector<Verdict> verify(const std::vector<VerifyItem>& items) = 0;
  // Computes the prompts of these started slots now, all but the last
  // token (their first verify() feeds it), for an engine whose target
  // would otherwise wait for their first drafts. Changes no verdict; a
  // target may leave it all to verify() (the default).
  virtual void prefill(const std::vector<uint64_t>& slots) { (void)slots; }
  virtual void finish(uint64_t slot) = 0;  // frees the slot's cache
  virtual PrefillStats prefill_stats() const = 0;
  // Tokens its KV cache holds at most, every sequence together (its budget);
  // 0: no bound known. The engine starts no more sequences than fit.
  virtual int64_t kv_token_capacity() const { return 0; }
};

}  // namespace seed::spec
