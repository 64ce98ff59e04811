// TrigramStore: one AdaptiveTrigrams per request group (GenRequest::group),
// all over the same corpus table, created on first use and kept for the
// store's lifetime: every request of a problem, on whichever drafter of
// the engine, adapts and drafts from the same view (ADED's adaptation
// carries across requests: Liu et al. 2024, ADED, sec. 2.3).
// Owned jointly (shared_ptr) by the drafters of one engine. Thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>

#include "spec/drafters/aded/adaptive_trigrams.h"

namespace seed::spec {

class TrigramStore {
 public:
  // `corpus`: the table every group starts from (an empty one: groups learn
  // from the target's outputs alone).
  explicit TrigramStore(std::shared_ptr<const TrigramTable> corpus, TrigramAdaptation adaptation = {})
      : corpus_(std::move(corpus)), adaptation_(adaptation) {}

  std::shared_ptr<AdaptiveTrigrams> table(uint64_t group) {
    std::lock_guard<std::mutex> lock(mutex_);
    std::shared_ptr<AdaptiveTrigrams>& t = tables_[group];
    if (!t) t = std::make_shared<AdaptiveTrigrams>(corpus_, adaptation_);
    return t;
  }

 private:
  std::shared_ptr<const TrigramTable> corpus_;
  TrigramAdaptation adaptation_;
  std::mutex mutex_;  // guards tables_
  std::map<uint64_t, std::shared_ptr<AdaptiveTrigrams>> tables_;
};

}  // namespace seed::spec
