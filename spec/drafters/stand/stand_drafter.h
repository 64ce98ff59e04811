// StandDrafter: STAND's model-free drafter (Song et al. 2025, "Accelerated Test-Time Scaling with
// Model-Free Speculative Sampling", sec. 4). Drafts come from the n-gram table of the slot's
// group (NgramStore), filled with the target's own next-token
// distributions as verdicts arrive (Verdict::target_top), so the requests
// of one problem -- trajectories, branches, other drafters' slots -- teach
// each other. (Under mpirun each draft rank has its own store, and the
// coordinator sends every verdict's lesson to the others: spec/drafters/lesson.h.)
//
// A proposal fills a static tree (StaticTree) breadth-first: at each node
// the longest stored context (4..1 tokens) of the path so far gives up to
// 10 candidates, normalised to q; the node's m children are the m most
// likely candidates (a deterministic draft). With
// DraftSettings::sample_drafts, sampled requests draw them instead without
// replacement by Gumbel-top-k (keys log q + Gumbel noise from the request's
// counter-based stream), so the verifier's without-replacement rule applies
// (DraftTree::without_replacement). A node with fewer candidates than
// children keeps fewer; one with none, or beyond max_depth, none (the
// subtree is dropped).
//
// Drafts depend on the shared table, i.e. on what other requests of the
// group have been accepted so far. The top candidates' tokens are still
// the target's own (the verifier's matching rule); drawn ones give exactly
// the target's distribution, but tokens not reproducible across engines.
// Not thread-safe (one caller); the table is.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>

#include "spec/drafters/drafter_slots.h"
#include "spec/drafters/stand/ngram_store.h"
#include "spec/drafters/stand/static_tree.h"

namespace seed::spec {

// What a StandDrafter keeps per slot.
struct StandSlot {
  std::vector<int32_t> tokens;  // accepted so far
  DraftSettings settings;
  std::shared_ptr<NgramTable> table;  // the group's
  StaticTree tree;
  std::vector<int32_t> placed;  // the last proposal: node of `tree` of each draft node
};

class StandDrafter : public SlotDrafter<StandSlot> {
 public:
  // Shares `store` with the engine's other drafters. `tree`: the static
  // tree to fill; none: each slot's k_config (a product tree).
  StandDrafter(std::shared_ptr<NgramStore> store, int64_t vocab, std::optional<StaticTree> tree);

  void start(uint64_t slot, const std::vector<int32_t>& tokens, const DraftSettings& settings) override;
  DraftTree propose(uint64_t slot, int max_depth) override;
  // Adds the target's distributions at the verdict's tokens to the group's
  // table, then the tokens to the slot's context.
  void advance(uint64_t slot, const Verdict& verdict) override;
  void end_group(uint64_t group) noexcept override { store_->drop(group); }

  // Constructed with a tree: per node of it, how many verdicts accepted
  // the draft token placed there (what STAND's tree optimisation keeps the
  // most frequent of; StaticTree::pruned). Empty otherwise.
  const std::vector<int64_t>& accepted_per_node() const { return accepted_per_node_; }

 private:
  std::shared_ptr<NgramStore> store_;
  int64_t vocab_;
  std::optional<StaticTree> tree_;
  std::vector<int64_t> accepted_per_node_;
};

}  // namespace seed::spec
