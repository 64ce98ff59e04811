// Drafter: proposes draft trees for the sequences it hosts (docs/architecture.md, "Drafters").
//
// The engines talk to drafters only through this handle, so a drafter can
// be a draft model in this process (DraftModelDrafter), a model-free one, or
// a proxy for a draft rank under mpirun. A drafter keeps per-sequence state
// (its KV cache of the accepted tokens); sequences are "slots" chosen by the
// engine. Not thread-safe: one caller at a time (the SEED engine gives each
// drafter its own worker thread).
#pragma once

#include <algorithm>
#include <cstdint>
#include <exception>
#include <optional>
#include <vector>

#include "models/base/sampling.h"
#include "spec/api/verifier.h"

namespace seed::spec {

// A pruned candidate tree (PCT: Zheng & Wang 2025, EDD-PCT, sec. 3.2)
// in place of a fixed shape: a node's children are the draft's
// k_config[depth] most probable tokens; a node expands only while its path
// confidence (the product of the draft's probabilities along its path, an
// estimate of the chance the target accepts it) is at least `expand`, the
// cost of a draft step over a target step; at the end nodes whose path
// confidence is below `prune` are dropped. Depth and width follow the
// draft's confidence; a level holds at most floor(1 / expand) expandable
// nodes, since its path confidences sum to at most 1. The children are
// proposed deterministically (DraftTree::deterministic), for which the
// verifier's rule is lossless at any temperature.
struct PrunedTree {
  float expand = 0.036f;
  float prune = 0.01f;
};

// The draft distribution q' a draft model samples from and sends with its
// proposal: the request's transformation of its logits (DraftSettings::
// sampling), cut further to its top_k tokens and its top_p nucleus. The
// verifier is exact for the target whatever q' is, since it tests against
// the very q' the draws came from (q' is zero off its support); a cut only
// lowers acceptance, and only where the dropped tail had mass under p too.
// Top 32: a draft model's top 32 tokens hold nearly all its mass at the
// temperatures search samples at, and 32 (id, p) pairs are 256 bytes per
// context on the wire and in memory, where a vocabulary row is 0.5 MB at
// 128K tokens.
struct DraftTruncation {
  int32_t top_k = 32;  // 0: no cut beyond the request's top_k
  float top_p = 1.0f;  // 1: no cut beyond the request's top_p
  // The request's transformation with these cuts added (the tighter of each).
  SamplingParams applied_to(const SamplingParams& request) const {
    SamplingParams cut = request;
    if (top_k > 0 && (cut.top_k == 0 || top_k < cut.top_k)) cut.top_k = top_k;
    cut.top_p = std::min(cut.top_p, top_p);
    return cut;
  }
};

struct DraftSettings {
  SamplingParams sampling;  // the request's; q is this transformation of the draft logits
  uint64_t seed = 0;        // the request's random stream (GenRequest::seed, stream)
  uint64_t stream = 0;
  // Children per node at each depth: {1, 1, 1, 1} is a chain of 4, {2, 2, 1}
  // a tree of 2 + 4 + 4 nodes: a node's most likely tokens under q, distinct.
  std::vector<int> k_config;
  uint64_t group = 0;  // GenRequest::group: whose shared drafting state this slot uses and grows
  // Set: k_config bounds a pruned candidate tree (drafters with
  // probabilities; the others refuse it).
  std::optional<PrunedTree> pruned;
  // Sampled requests: draw the children from q instead, i.i.d. (a draft
  // model) or without replacement (STAND; DraftTree::without_replacement),
  // and send q with them. The verifier tests drawn tokens by rejection
  // sampling against q; the tokens it keeps then depend on the draft,
  // where the matching rule keeps autoregressive sampling's own
  // (verifier.h).
  bool sample_drafts = false;
  // Whether this slot's children are drawn from q (else q's winner of the
  // target's race, then its top tokens).
  bool draws_from_q() const { return sample_drafts && !sampling.greedy(); }
};

// A slot to propose for, and how deep (Drafter::propose_batch), and what
// came of it: the draft, or the error propose() would have thrown.
struct DraftAsk {
  uint64_t slot = 0;
  int max_depth = 0;
};
struct DraftResult {
  DraftTree draft;
  std::exception_ptr error;
};

class Drafter {
 public:
  virtual ~Drafter() = default;
  // Starts hosting `slot`, whose accepted tokens so far are `tokens`.
  virtual void start(uint64_t slot, const std::vector<int32_t>& tokens, const DraftSettings& settings) = 0;
  // A draft continuing the slot's accepted tokens, at most `max_depth` deep
  // (the engine's limit from max_new_tokens and the target's context; 0
  // gives an empty draft). Draws are keyed by (seed, stream, absolute
  // position, kDraft, sibling rank), so a draft depends only on the
  // accepted tokens, never on when or where it was made.
  virtual DraftTree propose(uint64_t slot, int max_depth) = 0;
  // Proposals for several slots at once, in the asks' order, each the one
  // propose() gives it alone. A drafter over a model drafts them side by
  // side, one forward per level, where a step costs about what one
  // sequence's does (the weights are read once), and a forward that fails
  // fails them all; by default one after another, each failing alone.
  virtual std::vector<DraftResult> propose_batch(const std::vector<DraftAsk>& asks) {
    std::vector<DraftResult> results(asks.size());
    for (size_t i = 0; i < asks.size(); ++i) {
      try {
        results[i].draft = propose(asks[i].slot, asks[i].max_depth);
      } catch (...) {
        results[i].error = std::current_exception();
      }
    }
    return results;
  }
  // Tells the drafter what the verifier decided on the slot's last proposal:
  // the accepted node path and the tokens the sequence grew by (path tokens,
  // then the bonus token), with the target's top entries of p at each of
  // those tokens when the target was asked for them (Verdict::target_top).
  virtual void advance(uint64_t slot, const Verdict& verdict) = 0;
  // Stops hosting `slot` and frees its state. Unknown slots are ignored.
  virtual void finish(uint64_t slot) = 0;
  // No request of `group` (DraftSettings::group) follows: drop what the
  // drafter keeps for the group (STAND's, ADED's table). Unlike the calls
  // above, thread-safe, and it never throws: the engine calls it from its
  // callers' threads beside the drafter's own, and a drafter that cannot
  // pass it on (a lost draft rank) has nothing left to drop.
  virtual void end_group(uint64_t /*group*/) noexcept {}
  // Whether its drafts are computed on this process's cores. A proxy for a
  // draft rank's drafter is not: its thread only waits, so its idleness
  // frees no core for the target's forwards.
  virtual bool drafts_here() const { return true; }
  // Forwards of its model so far that warmed up a CUDA graph rather than
  // replay one (PrefillStats::graph_warm_ups): drafts made across one are
  // no measure of the others. Thread-safe.
  virtual int64_t graph_warm_ups() const { return 0; }
};

}  // namespace seed::spec
