// The EDD drafter: drafts with an EDD (Zheng & Wang 2025, EDD-PCT, sec. 3.1),
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
// Otherwise as the draft-model drafter: chains, fixed trees and pruned trees,
// greedy or sampled, a batch of slots drafted side by side (each level of
// all their trees in one forward); one shared model, a cache per drafter
// (model_drafter.h).
#pragma once

#include <memory>

#include "models/causal_lm.h"
#include "spec/api/drafter.h"
#include "spec/engine/logit_reads.h"

namespace seed::spec {

// Shares `model`. Throws kInvalidArgument unless model->config().is_edd()
// and it is a whole model (not a tensor-parallel shard). Its advance()
// throws kInvalidArgument when a verdict lacks the hidden states of the
// positions the slot's drafts need (a target that keeps none). Sampled
// drafts are drawn from, and carry, `cut` applied to each request's
// sampling (DraftTruncation).
std::unique_ptr<Drafter> make_edd_drafter(std::shared_ptr<const models::CausalLM> model,
                                          models::KvCacheOptions cache_options = {},
                                          DraftTruncation cut = {},
                                          LogitReads reads = LogitReads::kAuto);

}  // namespace seed::spec
