// How the spec values inside wire messages are written and read
// (parallel/wire.h gives the format): a slot's draft settings, a draft tree
// with the q rows it was drawn from, a verdict with the target's top
// entries, and a lesson for another draft rank's tables.
//
// Internal to seed_wire. Each get_ validates what it reads and throws
// kCorruption through Reader::fail(); each put_ throws kInvalidArgument for
// a value the format cannot carry. Thread-safe: pure functions.
#pragma once

#include "parallel/wire.h"
#include "parallel/wire_buffer.h"

namespace seed::parallel::wire {

void put_settings(Writer& w, const spec::DraftSettings& s);
spec::DraftSettings get_settings(Reader& r);

// A draft: its nodes' parents are earlier nodes; a sampled one carries the
// q rows of the contexts that have children, each a distribution by its
// support in which every node's token has mass.
void put_draft(Writer& w, const spec::DraftTree& d);
spec::DraftTree get_draft(Reader& r);

void put_verdict(Writer& w, const spec::Verdict& v);
spec::Verdict get_verdict(Reader& r);

// A lesson for `drafter`'s tables, within the context and distributions
// spec::lesson_context(drafter) allows.
void put_lesson(Writer& w, spec::DrafterKind drafter, const spec::Lesson& l);
LessonMessage get_lesson(Reader& r);

// A spec::DrafterKind sent as its index in spec::kDrafterKinds.
spec::DrafterKind get_drafter_kind(Reader& r);

}  // namespace seed::parallel::wire
