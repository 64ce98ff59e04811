// LookupDrafter: prompt lookup decoding (Saxena 2023), the simplest
// model-free drafter. The draft is a chain: the tokens that followed the
// latest earlier occurrence of the context's last n tokens (n = 3, then 2,
// then 1) in the request's own prompt and accepted tokens. No match, no
// draft. Deterministic (q one-hot), so every verifier rule accepts it.
// Not thread-safe (one caller).
#pragma once

#include <cstdint>

#include "spec/drafters/drafter_slots.h"

namespace seed::spec {

// What a LookupDrafter keeps per slot.
struct LookupSlot {
  std::vector<int32_t> tokens;  // prompt and accepted tokens
  int shape_depth = 0;          // k_config's depth
};

class LookupDrafter : public SlotDrafter<LookupSlot> {
 public:
  static constexpr int kMaxMatch = 3;  // longest suffix matched

  LookupDrafter() : SlotDrafter("lookup drafter") {}

  void start(uint64_t slot, const std::vector<int32_t>& tokens, const DraftSettings& settings) override;
  // A chain of at most min(max_depth, k_config size) tokens.
  DraftTree propose(uint64_t slot, int max_depth) override;
  void advance(uint64_t slot, const Verdict& verdict) override;
};

}  // namespace seed::spec
