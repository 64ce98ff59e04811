// The draft-model drafter: a small causal LM that drafts chains or token
// trees.
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
// The draft model is shared, the cache and the slots each drafter's own
// (model_drafter.h), so drafters built from one model may run on threads
// of their own.
#pragma once

#include <memory>

#include "models/causal_lm.h"
#include "spec/api/drafter.h"
#include "spec/engine/logit_reads.h"

namespace seed::spec {

// Shares `model`. Throws kInvalidArgument for a tensor-parallel shard:
// drafters run whole models. Sampled drafts are drawn from, and carry,
// `cut` applied to each request's sampling (DraftTruncation).
std::unique_ptr<Drafter> make_draft_model_drafter(std::shared_ptr<const models::CausalLM> model,
                                                  models::KvCacheOptions cache_options = {},
                                                  DraftTruncation cut = {},
                                                  LogitReads reads = LogitReads::kAuto);

}  // namespace seed::spec
