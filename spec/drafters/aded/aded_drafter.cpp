#include "spec/drafters/aded/aded_drafter.h"

#include <algorithm>
#include <cstdint>

#include "models/base/counter_rng.h"
#include "models/base/error.h"

namespace seed::spec {

AdedDrafter::AdedDrafter(std::shared_ptr<TrigramStore> store, AdedSearchOptions search)
    : SlotDrafter("aded drafter"), store_(std::move(store)), search_(search) {
  SEED_CHECK(store_ != nullptr, kInvalidArgument) << "aded drafter: no tri-gram store";
}

void AdedDrafter::start(uint64_t slot, const std::vector<int32_t>& tokens, const DraftSettings& settings) {
  AdedSlot& s = slots_.start(slot, tokens, AdedSlot{tokens, settings, store_->table(settings.group)});
  s.table->adjust(s.tokens, s.tokens.size());
}

DraftTree AdedDrafter::propose(uint64_t slot, int max_depth) {
  AdedSlot& s = slots_.at(slot);
  const std::vector<int>& shape = s.settings.k_config;
  const size_t depth = static_cast<size_t>(std::max(0, std::min(max_depth, static_cast<int>(shape.size()))));
  DraftTree draft;
  draft.deterministic = true;
  if (depth == 0 || s.tokens.size() < 2) return draft;

  const uint64_t seed = s.settings.seed;
  const uint64_t stream = s.settings.stream;
  const uint32_t position = static_cast<uint32_t>(s.tokens.size());
  const std::vector<AdedDraft> drafts = aded_search(
      [&s](int32_t a, int32_t b) { return s.table->successors(a, b); }, s.tokens[s.tokens.size() - 2],
      s.tokens.back(), search_,
      [&](uint32_t i) { return uniform({seed, stream, position, RngPurpose::kDraft, i}); });

  // The trie: children[n + 1] are node n's (n = -1: the prefix's).
  std::vector<std::vector<int32_t>> children(1);
  for (const AdedDraft& d : drafts) {
    int32_t at = -1;
    for (size_t i = 0; i < d.tokens.size() && i < depth; ++i) {
      std::vector<int32_t>& kids = children[static_cast<size_t>(at + 1)];
      const auto found = std::find_if(kids.begin(), kids.end(), [&](int32_t n) {
        return draft.tokens[static_cast<size_t>(n)] == d.tokens[i];
      });
      if (found != kids.end()) {
        at = *found;
        continue;
      }
      if (static_cast<int>(kids.size()) >= shape[i] || static_cast<int>(draft.tokens.size()) >= kMaxNodes) break;
      const int32_t node = static_cast<int32_t>(draft.tokens.size());
      draft.tokens.push_back(d.tokens[i]);
      draft.parents.push_back(at);
      kids.push_back(node);
      children.emplace_back();
      at = node;
    }
  }
  return draft;
}

void AdedDrafter::advance(uint64_t slot, const Verdict& verdict) {
  AdedSlot& s = slots_.at(slot);
  s.tokens.insert(s.tokens.end(), verdict.tokens.begin(), verdict.tokens.end());
  s.table->adjust(s.tokens, s.tokens.size());
}

}  // namespace seed::spec
