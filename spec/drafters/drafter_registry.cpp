#include "spec/drafters/drafter_registry.h"

#include "models/base/error.h"
#include "spec/drafters/aded/aded_drafter.h"
#include "spec/drafters/model/draft_model_drafter.h"
#include "spec/drafters/model/edd_drafter.h"
#include "spec/drafters/lookup_drafter.h"
#include "spec/drafters/stand/stand_drafter.h"

namespace seed::spec {

std::unique_ptr<Drafter> make_drafter(DrafterKind kind, const DrafterResources& r) {
  switch (kind.value()) {
    case DrafterKind::kModel:
      SEED_CHECK(r.draft_model != nullptr, kInvalidArgument) << "--drafter model: needs a draft model (--draft)";
      if (r.draft_model->config().is_edd()) {
        return make_edd_drafter(r.draft_model, r.draft_cache, r.draft_cut, r.draft_reads);
      }
      return make_draft_model_drafter(r.draft_model, r.draft_cache, r.draft_cut, r.draft_reads);
    case DrafterKind::kStand:
      SEED_CHECK(r.tables != nullptr, kInvalidArgument) << "--drafter stand: needs the engine's n-gram store";
      return std::make_unique<StandDrafter>(r.tables, r.vocab, r.tree);
    case DrafterKind::kLookup:
      return std::make_unique<LookupDrafter>();
    case DrafterKind::kAded:
      SEED_CHECK(r.trigrams != nullptr, kInvalidArgument) << "--drafter aded: needs the engine's tri-gram store";
      return std::make_unique<AdedDrafter>(r.trigrams);
  }
  SEED_FAIL(kInternal) << "drafter kind " << static_cast<int>(kind.value()) << " has no builder";
}

}  // namespace seed::spec
