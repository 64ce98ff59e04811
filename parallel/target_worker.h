// The serve loop of the target group's leader, rank 1 (README.md, "Running
// under mpirun"; remote_target.h is the coordinator's end).
//
// The leader answers the coordinator's start, verify and finish messages
// on its target, a TpLeaderTarget, which replays each call on the group's
// other ranks (serve_tp_target, tp_target.h). A verify message is answered
// with a verdicts message, or an error message if the target threw (for a
// start that threw, at that slot's next verify); a usage request with every
// group rank's usage (rank_usage.h); the loop goes on. While idle it sleeps
// between MPI_Improbe tests, never spinning a core.
// Not thread-safe: the rank's main thread runs it.
#pragma once

#include "parallel/rank_usage.h"
#include "parallel/tp_target.h"

namespace seed::parallel {

// Serves world rank `coordinator`'s target messages to this rank, `rank`,
// until a shutdown message, which it answers with the group's usage (the
// coordinator's sign that the group is still there), and returns its
// statistics (requests: answered verifies; busy: time in target calls).
// Throws kCorruption (naming the coordinator) for a message that is not
// one, and kInternal if MPI fails: the caller reports it and aborts the job.
WorkerStats serve_target_requests(TpLeaderTarget& target, int rank, int coordinator);

}  // namespace seed::parallel
