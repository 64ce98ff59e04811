// Lesson: what one verdict taught a group's drafting table, in a form that
// another copy of the group's table (on another draft rank) can learn it
// from exactly as the drafter that saw the verdict did.
//
// STAND's tables (NgramTable) learn the target's top entries after each
// context of up to 4 tokens; ADED's (AdaptiveTrigrams) raise the triples
// of the sequence's last `window` tokens. Both read only the last few
// tokens before what the sequence grew by, so a lesson carries those
// (lesson_context) and not the whole sequence. A lesson is learned through
// the calls the drafters make (StandDrafter::advance is learn_verdict;
// AdedDrafter adjusts its table on the same tokens), so a table that learns
// a sequence's lessons equals the table that learned the sequence itself. Lookup and draft models keep no group
// table: nothing to teach. Thread-safe: the tables are.
#pragma once

#include <cstdint>
#include <vector>

#include "spec/drafters/aded/adaptive_trigrams.h"
#include "spec/api/drafter_kind.h"
#include "spec/drafters/stand/ngram_table.h"
#include "spec/api/verifier.h"

namespace seed::spec {

struct Lesson {
  uint64_t group = 0;             // GenRequest::group: whose table learns it
  std::vector<int32_t> context;   // the sequence's last tokens before `tokens` (at most lesson_context)
  std::vector<int32_t> tokens;    // what the sequence grew by; empty: a start (ADED adapts to the prompt)
  std::vector<TopTokens> target_top;  // STAND: the target's top entries at each of `tokens` (Verdict::target_top)
};

// How many tokens before a verdict's a drafter of `kind` reads when it
// learns: 4 for STAND, ADED's window (16) for ADED, 0 for kinds with no
// group table (no lessons).
size_t lesson_context(DrafterKind kind);

// Whether a table of `kind` learns anything from `lesson`: ADED's from any
// (a start's too: it adapts to the prompt), STAND's only from target
// distributions; lookup and draft models from none.
bool teaches(DrafterKind kind, const Lesson& lesson);

// STAND's learning from a verdict: for each i, adds target_top[i] as the
// distribution after `sequence`, then appends tokens[i] to it (tokens past
// target_top's end are appended only). REQUIRES target_top.size() <= tokens.size().
void learn_verdict(NgramTable& table, std::vector<int32_t>& sequence, const std::vector<int32_t>& tokens,
                   const std::vector<TopTokens>& target_top);

// `lesson` learned by a STAND table (learn_verdict from its context) or
// by an ADED table (Algorithm 2 on context + tokens).
void learn(NgramTable& table, const Lesson& lesson);
void learn(AdaptiveTrigrams& table, const Lesson& lesson);

// The lesson a drafter of `kind` learns when `sequence` (all its tokens so
// far) grows by `tokens`: its last lesson_context(kind) tokens as context.
Lesson make_lesson(DrafterKind kind, uint64_t group, const std::vector<int32_t>& sequence,
                   std::vector<int32_t> tokens, std::vector<TopTokens> target_top);

}  // namespace seed::spec
