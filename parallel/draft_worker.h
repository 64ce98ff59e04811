// The serve loop of a draft rank (README.md, "Running under mpirun";
// remote_drafter.h is the coordinator's end).
//
// A draft rank hosts a Drafter of each kind the coordinator asks for (the
// start message names it; one per kind, so one STAND or ADED table per
// request group on this rank) and the draft state (KV caches) of every
// sequence the coordinator assigns it, for whichever engine asks: start,
// verdict and finish messages update a slot, a draft message (a round's
// slots) is answered with one proposal message, the slots of each drafter
// drafted side by side (Drafter::propose_batch), a usage request with this rank's usage (rank_usage.h),
// and a lesson (what another draft rank's table of a group learned from a
// verdict; spec/drafters/lesson.h) is learned by this rank's table of the group,
// and an end group drops this rank's tables of the group (spec::Engine::end_group).
// Messages are handled one at a time, so lessons land between drafts.
// A drafter call that throws for a slot is answered with
// its error at that slot's next draft request (the coordinator's
// RemoteDrafter throws it there), and the slot is forgotten; the loop goes
// on. While idle the rank sleeps between MPI_Improbe tests (IdleBackoff),
// never spinning a core.
// Not thread-safe: the rank's main thread runs it.
#pragma once

#include <cstdint>
#include <functional>

#include "parallel/rank_usage.h"
#include "spec/api/drafter.h"
#include "spec/api/drafter_kind.h"
#include "spec/drafters/lesson.h"

namespace seed::parallel {

// Injected faults, to test how the coordinator survives a lost draft rank.
struct DraftWorkerFault {
  enum class Kind {
    kNone,
    kStopAnswering,  // once `after_proposals` drafts are answered, answer nothing more (shutdown still ends the loop)
    kKill,           // once `after_proposals` drafts are answered, SIGKILL this process
  };
  Kind kind = Kind::kNone;
  int64_t after_proposals = 0;
};

// Serves world rank `coordinator`'s draft messages to this rank, `rank`,
// until a shutdown message, which it answers with its usage (the
// coordinator's sign that the rank is still there), and returns its
// statistics (requests: drafts answered; batches: the draft messages that
// asked for them; busy: time in drafter calls). Throws kCorruption (naming
// the coordinator) for a message that is not one, and kInternal if MPI
// fails: the caller reports it and aborts the job.
// `drafter_of(kind)` gives this rank's drafter of a kind, the same one for
// every call with that kind; what it throws fails the slot being started.
// `learn(kind, lesson)` teaches this rank's table of that kind and
// lesson.group the lesson, and `end_group(group)` drops the group's tables
// of every kind; what they throw ends the loop (the caller reports it).
using DrafterOfKind = std::function<spec::Drafter&(spec::DrafterKind)>;
using LearnLesson = std::function<void(spec::DrafterKind, const spec::Lesson&)>;
using EndGroup = std::function<void(uint64_t group)>;
WorkerStats serve_draft_requests(const DrafterOfKind& drafter_of, const LearnLesson& learn, const EndGroup& end_group,
                                 int rank, int coordinator, const DraftWorkerFault& fault = {});

}  // namespace seed::parallel
