#include "spec/drafters/lookup_drafter.h"

#include <algorithm>
#include <cstdint>

#include "models/base/error.h"

namespace seed::spec {

void LookupDrafter::start(uint64_t slot, const std::vector<int32_t>& tokens, const DraftSettings& settings) {
  slots_.start(slot, tokens, LookupSlot{tokens, static_cast<int>(settings.k_config.size())});
}

DraftTree LookupDrafter::propose(uint64_t slot, int max_depth) {
  const LookupSlot& s = slots_.at(slot);
  const std::vector<int32_t>& t = s.tokens;
  const size_t length = t.size();
  const size_t depth = static_cast<size_t>(std::max(0, std::min(max_depth, s.shape_depth)));
  DraftTree draft;
  draft.deterministic = true;
  if (depth == 0) return draft;
  for (size_t n = std::min<size_t>(kMaxMatch, length - 1); n >= 1; --n) {
    // Latest start i of the suffix t[length - n, length) earlier in t.
    for (size_t i = length - n; i-- > 0;) {
      if (!std::equal(t.begin() + static_cast<std::ptrdiff_t>(i), t.begin() + static_cast<std::ptrdiff_t>(i + n),
                      t.end() - static_cast<std::ptrdiff_t>(n))) {
        continue;
      }
      const size_t end = std::min(length, i + n + depth);
      for (size_t j = i + n; j < end; ++j) {
        draft.parents.push_back(static_cast<int32_t>(draft.tokens.size()) - 1);
        draft.tokens.push_back(t[j]);
      }
      return draft;
    }
  }
  return draft;
}

void LookupDrafter::advance(uint64_t slot, const Verdict& verdict) {
  LookupSlot& s = slots_.at(slot);
  s.tokens.insert(s.tokens.end(), verdict.tokens.begin(), verdict.tokens.end());
}

}  // namespace seed::spec
