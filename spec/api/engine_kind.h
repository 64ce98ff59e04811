// EngineKind: which engine make_engine builds (engine_factory.h), as a value
// that answers what callers need to know about it.
//
// Callers ask capabilities, never compare names: a drafting engine needs a
// draft model, a batched one honours max_batch, a tree one drafts token
// trees by default, and one with a drafter pool drafts on several Drafter
// handles at once (threads here, draft ranks under mpirun). The name is the
// CLI value, the results' "engine" field and Engine::name(), one spelling.
// A trivially copyable value; thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "spec/api/named_kind.h"

namespace seed::spec {

class EngineKind : public NamedKind<EngineKind> {
 public:
  enum Value : uint8_t {
    kAr,         // autoregressive, one request after another (the baseline)
    kArBatch,    // autoregressive, every request in one forward per token
    kSd,         // speculative decoding per request, a chain of k
    kMcsd,       // multi-candidate: token-tree drafts, tree verification
    kSeed,       // SEED's scheduled drafting: a drafter pool, FCFS verify queue
    kSeedBatch,  // as kSeed, every ready proposal verified in one forward
  };

  constexpr EngineKind(Value value) : value_(value) {}  // NOLINT: implicit, as an enum

  // The kind named `name`. Throws seed::Error kInvalidArgument naming
  // "--engine", the name and every known name.
  static EngineKind parse(const std::string& name);

  constexpr Value value() const { return value_; }
  static constexpr std::array<const char*, 6> kNames = {"ar", "ar-batch", "sd", "mcsd", "seed", "seed-batch"};

  // Drafts and verifies: needs a draft model (or draft handles).
  constexpr bool drafts() const { return value_ != kAr && value_ != kArBatch; }
  // Verifies (or decodes) several sequences in one target forward, up to
  // EngineOptions::max_batch.
  constexpr bool batched_verify() const { return value_ == kArBatch || value_ == kSeedBatch; }
  // Drafts token trees when no draft shape is given (SEED appendix B's
  // {2, 2, 1}); the others draft chains of draft_length.
  constexpr bool tree_drafts() const { return value_ == kMcsd; }
  // Drafts on a pool of Drafter handles, one sequence per drafter at a
  // time, while the target verifies: drafter threads in one process, draft
  // ranks under mpirun.
  constexpr bool drafter_pool() const { return value_ == kSeed || value_ == kSeedBatch; }

 private:
  Value value_;
};

// Every kind, in the order benchmarks list them.
inline constexpr std::array<EngineKind, 6> kEngineKinds = {EngineKind::kAr,   EngineKind::kArBatch,
                                                           EngineKind::kSd,   EngineKind::kMcsd,
                                                           EngineKind::kSeed, EngineKind::kSeedBatch};

// "ar | ar-batch | ...": the names, for help text.
std::string engine_kind_names(const char* separator = " | ");

// The capabilities, checked where they are declared.
static_assert(!EngineKind(EngineKind::kAr).drafts() && !EngineKind(EngineKind::kArBatch).drafts());
static_assert(EngineKind(EngineKind::kSd).drafts() && !EngineKind(EngineKind::kSd).drafter_pool());
static_assert(EngineKind(EngineKind::kMcsd).tree_drafts() && !EngineKind(EngineKind::kSeed).tree_drafts());
static_assert(EngineKind(EngineKind::kSeed).drafter_pool() && !EngineKind(EngineKind::kSeed).batched_verify());
static_assert(EngineKind(EngineKind::kSeedBatch).drafter_pool() && EngineKind(EngineKind::kSeedBatch).batched_verify());
static_assert(EngineKind(EngineKind::kArBatch).batched_verify() && !EngineKind(EngineKind::kAr).batched_verify());

}  // namespace seed::spec
