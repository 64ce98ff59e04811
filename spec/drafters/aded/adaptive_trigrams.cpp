#include "spec/drafters/aded/adaptive_trigrams.h"

#include <algorithm>
#include <cstdint>

#include "models/base/error.h"

namespace seed::spec {

AdaptiveTrigrams::AdaptiveTrigrams(std::shared_ptr<const TrigramTable> base, TrigramAdaptation adaptation)
    : base_(std::move(base)), adaptation_(adaptation) {
  SEED_CHECK(base_ != nullptr, kInvalidArgument) << "adaptive tri-grams: no corpus table";
  SEED_CHECK(adaptation_.window >= 3, kInvalidArgument) << "adaptive tri-grams: window " << adaptation_.window << " < 3";
  SEED_CHECK(adaptation_.increment > 0 && adaptation_.cap >= adaptation_.increment, kInvalidArgument)
      << "adaptive tri-grams: increment " << adaptation_.increment << ", cap " << adaptation_.cap
      << " (expected 0 < increment <= cap)";
}

void AdaptiveTrigrams::adjust(const std::vector<int32_t>& tokens, size_t end) {
  SEED_CHECK(end <= tokens.size(), kInvalidArgument) << "adaptive tri-grams: end " << end << " > " << tokens.size();
  const size_t begin = end > static_cast<size_t>(adaptation_.window) ? end - static_cast<size_t>(adaptation_.window) : 0;
  std::lock_guard<std::mutex> lock(mutex_);
  for (size_t i = begin; i + 2 < end; ++i) {
    const uint64_t context = TrigramTable::key(tokens[i], tokens[i + 1]);
    const int32_t next = tokens[i + 2];
    auto& row = raised_[context];
    auto it = row.find(next);
    if (it == row.end()) {
      float corpus = 0;
      if (const auto* base = base_->successors(tokens[i], tokens[i + 1])) {
        for (const TrigramSuccessor& s : *base) {
          if (s.token == next) corpus = s.weight;
        }
      }
      // Present in M: raised; absent: created at the increment.
      row.emplace(next, corpus > 0 ? std::min(corpus + adaptation_.increment, adaptation_.cap) : adaptation_.increment);
    } else {
      it->second = std::min(it->second + adaptation_.increment, adaptation_.cap);
    }
  }
}

std::vector<TrigramSuccessor> AdaptiveTrigrams::successors(int32_t a, int32_t b) const {
  std::vector<TrigramSuccessor> out;
  if (const auto* base = base_->successors(a, b)) out = *base;
  std::lock_guard<std::mutex> lock(mutex_);
  const auto raised = raised_.find(TrigramTable::key(a, b));
  if (raised == raised_.end()) return out;
  for (TrigramSuccessor& s : out) {
    const auto it = raised->second.find(s.token);
    if (it != raised->second.end()) s.weight = it->second;
  }
  for (const auto& [token, weight] : raised->second) {
    const bool in_base = std::any_of(out.begin(), out.end(), [t = token](const TrigramSuccessor& s) { return s.token == t; });
    if (!in_base) out.push_back({token, weight});
  }
  sort_successors(out);
  return out;
}

}  // namespace seed::spec
