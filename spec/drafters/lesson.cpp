#include "spec/drafters/lesson.h"

#include <algorithm>
#include <cstdint>

#include "models/base/error.h"

namespace seed::spec {

size_t lesson_context(DrafterKind kind) {
  switch (kind.value()) {
    case DrafterKind::kStand: return NgramTable::kMaxContext;
    case DrafterKind::kAded: return static_cast<size_t>(TrigramAdaptation{}.window);
    case DrafterKind::kModel:
    case DrafterKind::kLookup: return 0;
  }
  return 0;
}

bool teaches(DrafterKind kind, const Lesson& lesson) {
  switch (kind.value()) {
    case DrafterKind::kStand: return !lesson.target_top.empty();
    case DrafterKind::kAded: return !lesson.context.empty() || !lesson.tokens.empty();
    case DrafterKind::kModel:
    case DrafterKind::kLookup: return false;
  }
  return false;
}

void learn_verdict(NgramTable& table, std::vector<int32_t>& sequence, const std::vector<int32_t>& tokens,
                   const std::vector<TopTokens>& target_top) {
  SEED_CHECK(target_top.size() <= tokens.size(), kInvalidArgument)
      << "stand: " << target_top.size() << " target distributions for " << tokens.size() << " tokens";
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (i < target_top.size()) table.add(sequence, sequence.size(), target_top[i]);
    sequence.push_back(tokens[i]);
  }
}

void learn(NgramTable& table, const Lesson& lesson) {
  std::vector<int32_t> sequence = lesson.context;
  learn_verdict(table, sequence, lesson.tokens, lesson.target_top);
}

void learn(AdaptiveTrigrams& table, const Lesson& lesson) {
  std::vector<int32_t> sequence = lesson.context;
  sequence.insert(sequence.end(), lesson.tokens.begin(), lesson.tokens.end());
  table.adjust(sequence, sequence.size());
}

Lesson make_lesson(DrafterKind kind, uint64_t group, const std::vector<int32_t>& sequence,
                   std::vector<int32_t> tokens, std::vector<TopTokens> target_top) {
  const size_t context = std::min(sequence.size(), lesson_context(kind));
  return {group, std::vector<int32_t>(sequence.end() - static_cast<std::ptrdiff_t>(context), sequence.end()),
          std::move(tokens), std::move(target_top)};
}

}  // namespace seed::spec
