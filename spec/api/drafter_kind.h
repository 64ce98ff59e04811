// DrafterKind: what proposes the drafts of a speculative engine, as a value
// that answers what the factory needs to know about it (engine_factory.h).
//
//   model   a small causal LM (DraftModelDrafter): needs a draft model folder.
//   stand   STAND (Song et al. 2025): n-gram tables of the target's own
//           next-token distributions, shared by every request of a group
//           (say, one problem), drafted stochastically into a static tree.
//           Needs the target's top entries of p with each verdict.
//   lookup  prompt lookup: the continuation of the latest earlier match of
//           the context's last tokens in the request's own tokens (a chain).
//   aded    ADED (Liu et al. 2024): a tri-gram table (from a corpus, or
//           empty) that adapts to the target's outputs per group, searched
//           by MCTS; the most visited paths merged into a token tree.
// The name is the CLI value (--drafter), the results' "drafter" field and
// the registry key, one spelling. A trivially copyable value; thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "spec/api/named_kind.h"

namespace seed::spec {

class DrafterKind : public NamedKind<DrafterKind> {
 public:
  enum Value : uint8_t { kModel, kStand, kLookup, kAded };

  constexpr DrafterKind(Value value) : value_(value) {}  // NOLINT: implicit, as an enum

  // The kind named `name`. Throws seed::Error kInvalidArgument naming
  // "--drafter", the name and every known name.
  static DrafterKind parse(const std::string& name);

  constexpr Value value() const { return value_; }
  static constexpr std::array<const char*, 4> kNames = {"model", "stand", "lookup", "aded"};

  // Drafts with a draft model (EngineOptions::draft must name one).
  constexpr bool needs_draft_model() const { return value_ == kModel; }
  // How many of the target's most likely next tokens (with p) the drafter
  // needs with each verdict (Verdict::target_top); 0: none.
  constexpr int target_top_k() const { return value_ == kStand ? 10 : 0; }
  // Has a distribution q to draw sampled requests' drafts from
  // (DraftSettings::sample_drafts); the others always propose fixed tokens.
  constexpr bool has_draft_distribution() const { return value_ == kModel || value_ == kStand; }

 private:
  Value value_;
};

inline constexpr std::array<DrafterKind, 4> kDrafterKinds = {DrafterKind::kModel, DrafterKind::kStand,
                                                             DrafterKind::kLookup, DrafterKind::kAded};

// "model | stand | lookup | aded": the names, for help text.
std::string drafter_kind_names(const char* separator = " | ");

static_assert(DrafterKind(DrafterKind::kModel).needs_draft_model());
static_assert(!DrafterKind(DrafterKind::kStand).needs_draft_model() && DrafterKind(DrafterKind::kStand).target_top_k() > 0);
static_assert(DrafterKind(DrafterKind::kLookup).target_top_k() == 0);
static_assert(!DrafterKind(DrafterKind::kAded).needs_draft_model() && DrafterKind(DrafterKind::kAded).target_top_k() == 0);

}  // namespace seed::spec
