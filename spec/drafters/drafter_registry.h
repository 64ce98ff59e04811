// Builds a Drafter of a given kind (drafter_kind.h) from what the kinds
// need: the registry behind `--drafter`. The factory (engine_factory.h)
// makes one DrafterResources per engine, so that every drafter of the
// engine shares the draft model's weights, STAND's or ADED's tables.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>

#include "models/kv_cache.h"
#include "spec/api/drafter.h"
#include "spec/api/drafter_kind.h"
#include "spec/engine/logit_reads.h"
#include "spec/drafters/stand/ngram_store.h"
#include "spec/drafters/stand/static_tree.h"
#include "spec/drafters/aded/trigram_store.h"

namespace seed::models {
class CausalLM;
}

namespace seed::spec {

struct DrafterResources {
  std::shared_ptr<const models::CausalLM> draft_model;  // kModel: shared, whole
  models::KvCacheOptions draft_cache;                    // kModel: each drafter's KV cache
  DraftTruncation draft_cut;                             // kModel: the q' sampled drafts carry
  LogitReads draft_reads = LogitReads::kAuto;            // kModel: where its draft rows are read
  std::shared_ptr<NgramStore> tables;                    // kStand: the engine's per-group tables
  std::optional<StaticTree> tree;                        // kStand: none = each request's k_config
  int64_t vocab = 0;                                     // kStand: the target's vocabulary
  std::shared_ptr<TrigramStore> trigrams;                // kAded: the engine's per-group tri-gram tables
};

// Throws kInvalidArgument naming what `kind` needs and `resources` lacks.
std::unique_ptr<Drafter> make_drafter(DrafterKind kind, const DrafterResources& resources);

}  // namespace seed::spec
