// Growing a draft tree level by level on a draft model's KV cache: the part
// of a proposal that a draft model (DraftModelDrafter) and an EDD
// (EddDrafter) share once each has the logits at the slot's context.
//
// Every node of a level is one of the top tokens of q at its parent's
// context, a sampled request's first one the winner of the target's race
// over q (drawn from q when DraftSettings::sample_drafts; a pruned tree's
// are its top-k by path confidence)
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
#include "spec/engine/logit_reads.h"

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

// One tree to grow: from the context `main` ends with, its root level's
// nodes at `position`, `depth` >= 1 levels at most (a pruned tree may stop
// earlier); sampled children are drawn from the truncation applied to
// `settings`' sampling (DraftTruncation), the q' rows the tree carries.
struct TreeToGrow {
  models::SequenceId main = 0;
  const DraftSettings* settings = nullptr;
  int64_t position = 0;
  int depth = 0;
};

// The trees grown side by side, in order: each level of every tree is fed
// back in one forward, so that a level costs one draft step however many
// sequences draft (the draft's weights are read once). `logits`: row i,
// the draft's logits at tree i's context, in its LM head's columns
// (CausalLM::forward_head). `shareable`: whether the fed
// nodes' K/V may be offered to other sequences (SequenceInput::shareable).
// A tree depends only on its own rows, never on the trees beside it.
// `reads`: where the trees that take top tokens read their rows (on a GPU,
// levels of a real vocabulary from summaries computed there:
// logit_reads.h); pruned trees and draws from q copy theirs to the host.
std::vector<GrownDraft> grow_draft_trees(const models::CausalLM& model, models::KvCache& cache,
                                         const std::vector<TreeToGrow>& trees, at::Tensor logits,
                                         const DraftTruncation& cut, bool shareable,
                                         LogitReads reads = LogitReads::kAuto);

}  // namespace seed::spec
