// Growing a draft tree level by level on a draft model's KV cache: the part
// of a proposal that a draft model (DraftModelDrafter) and an EDD
// (EddDrafter) share once each has the logits at the slot's context.
//
// Every node of a level is drawn from q at its parent's context (greedy
// requests take the top tokens; a pruned tree its top-k by path confidence)
// and, unless it is the last level, fed back in one batched forward to get q
// at its own context. A node with several children forks its cache sequence
// (copy-on-write, so siblings share the prefix); the first child continues
// its parent's sequence, so the rank-0 path lies on the slot's main sequence
// and, when the verifier accepts along it, nothing is recomputed.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

#include "models/causal_lm.h"
#include "spec/api/drafter.h"

namespace seed::spec {

// Children per node at most (draws are keyed by parent and rank within it).
constexpr int kMaxDraftChildren = 256;

// Throws kInvalidArgument, naming `drafter` and the slot, unless a slot may
// start drafting with these tokens and settings (tokens, and a k_config
// of 1 to kMaxDraftChildren children per depth).
void check_draft_start(const char* drafter, uint64_t slot, const std::vector<int32_t>& tokens,
                       const DraftSettings& settings);

struct GrownDraft {
  DraftTree tree;
  std::vector<int32_t> main_path;            // nodes fed on the main sequence, root first
  std::vector<models::SequenceId> forks;     // sequences the other branches used; the caller releases them
};

// `logits`: one row, the draft's logits at the context `main` ends with;
// sampled children are drawn from `cut` applied to the request's sampling
// (DraftTruncation), the q' rows the tree carries;
// the root level's nodes sit at `position`. `depth` >= 1 levels at most (a
// pruned tree may stop earlier). `shareable`: whether the fed nodes' K/V
// may be offered to other sequences (SequenceInput::shareable).
GrownDraft grow_draft_tree(const models::CausalLM& model, models::KvCache& cache, models::SequenceId main,
                           at::Tensor logits, const DraftSettings& settings, const DraftTruncation& cut,
                           int64_t position, int depth, bool shareable);

}  // namespace seed::spec
