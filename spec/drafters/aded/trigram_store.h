// TrigramStore: ADED's adaptive tri-grams of each request group
// (GroupTables), all over the same corpus table: every request of a
// problem, on whichever drafter of the engine, adapts and drafts from the
// same view (ADED's adaptation carries across requests: Liu et al. 2024,
// ADED, sec. 2.3).
#pragma once

#include <memory>
#include <utility>

#include "spec/drafters/aded/adaptive_trigrams.h"
#include "spec/drafters/group_tables.h"

namespace seed::spec {

class TrigramStore : public GroupTables<AdaptiveTrigrams> {
 public:
  // `corpus`: the table every group starts from (an empty one: groups learn
  // from the target's outputs alone).
  explicit TrigramStore(std::shared_ptr<const TrigramTable> corpus, TrigramAdaptation adaptation = {})
      : GroupTables([corpus = std::move(corpus), adaptation] {
          return std::make_shared<AdaptiveTrigrams>(corpus, adaptation);
        }) {}
};

}  // namespace seed::spec
