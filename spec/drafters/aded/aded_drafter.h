// AdedDrafter: ADED's model-free drafter (Liu et al. 2024, "Adaptive Draft-Verification for
// Efficient Large Language Model Decoding", sec. 2). Drafts come from the tri-gram table of the slot's
// group (TrigramStore): a corpus table (`seed trigrams`, optional) that
// adapts to what the target writes -- the prompt when a slot starts, and
// each verdict's tokens -- by Algorithm 2 (AdaptiveTrigrams).
//
// A proposal runs ADED's search (aded_search.h) from the last two tokens
// and merges its drafts, most visited first, into one token trie: a draft
// adds its tokens until one would exceed the slot's draft shape (at depth
// d a node keeps at most k_config[d] children, and the trie at most
// k_config's depth and kMaxNodes nodes, ADED's draft buffer) or max_depth.
// The search's rollouts draw from the request's counter-based stream
// (kDraft, keyed by the position), so a proposal is a function of the
// slot's tokens and its group's table.
//
// Drafts are deterministic proposals: for sampled requests the verifier
// keeps a token x where it is the target's own draw (probability p(x)), so
// the tokens are those of sampling alone whatever the trie proposes. Not
// thread-safe (one caller); the group tables are.
#pragma once

#include <cstdint>
#include <memory>

#include "spec/drafters/aded/aded_search.h"
#include "spec/drafters/drafter_slots.h"
#include "spec/drafters/aded/trigram_store.h"

namespace seed::spec {

// What an AdedDrafter keeps per slot.
struct AdedSlot {
  std::vector<int32_t> tokens;  // prompt and accepted tokens
  DraftSettings settings;
  std::shared_ptr<AdaptiveTrigrams> table;  // the group's
};

class AdedDrafter : public SlotDrafter<AdedSlot> {
 public:
  static constexpr int kMaxNodes = 64;  // draft nodes of one proposal

  // Shares `store` with the engine's other drafters.
  explicit AdedDrafter(std::shared_ptr<TrigramStore> store, AdedSearchOptions search = {});

  // Adapts the group's table to the prompt's last tokens.
  void start(uint64_t slot, const std::vector<int32_t>& tokens, const DraftSettings& settings) override;
  DraftTree propose(uint64_t slot, int max_depth) override;
  // Adds the verdict's tokens to the slot's context and adapts the group's
  // table to the context's last tokens.
  void advance(uint64_t slot, const Verdict& verdict) override;
  void end_group(uint64_t group) noexcept override { store_->drop(group); }

 private:
  std::shared_ptr<TrigramStore> store_;
  AdedSearchOptions search_;
};

}  // namespace seed::spec
