// RemoteDrafter: a Drafter on the coordinator whose sequences live on one
// draft rank (README.md, "Running under mpirun"; draft_worker.h is the other
// end).
//
// start, advance and finish become start, verdict and finish messages sent
// without waiting; propose_batch sends one draft message for all its asks,
// which the rank drafts side by side (its drafter's propose_batch), and
// blocks its caller (on a future, not a spinning core) until the rank
// answers with one proposal message: each slot's draft or error. All MPI goes through the coordinator's MpiEventLoop, so
// the SEED engine's drafter threads may each drive their own RemoteDrafter.
//
// Shared tables: with `peers` (the other draft ranks), what the rank's
// STAND or ADED table of a slot's group learns from each verdict (and
// ADED's from each start) also goes to every available peer as a lesson
// (spec/drafters/lesson.h), so that every draft rank's table of the group learns
// from all of the group's requests. Lessons need no answer; a lost peer
// is skipped. end_group goes to the rank, which drops its tables of the
// group (each peer hears it from its own RemoteDrafter).
//
// Failures: a rank that does not answer within `timeout`, or died, makes
// start/propose/advance throw seed::Error kUnavailable naming the rank
// (the engine then moves its sequences elsewhere); finish on such a rank
// does nothing. A slot whose drafter threw on the rank fails alone, as
// kInternal with the rank's text.
// Not thread-safe (the Drafter contract): one caller at a time, but for
// end_group (it only hands the loop a message).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <vector>

#include "parallel/mpi_event_loop.h"
#include "spec/api/drafter.h"
#include "spec/api/drafter_kind.h"
#include "spec/drafters/lesson.h"

namespace seed::parallel {

class RemoteDrafter final : public spec::Drafter {
 public:
  // `loop` is borrowed and must outlive this object; `rank` runs
  // serve_draft_requests (draft_worker.h) and drafts this object's slots
  // with its drafter of kind `drafter`; `peers` (draft ranks, not `rank`)
  // learn its lessons.
  RemoteDrafter(MpiEventLoop& loop, int rank, std::chrono::milliseconds timeout,
                spec::DrafterKind drafter = spec::DrafterKind::kModel, std::vector<int> peers = {});

  void start(uint64_t slot, const std::vector<int32_t>& tokens, const spec::DraftSettings& settings) override;
  spec::DraftTree propose(uint64_t slot, int max_depth) override;
  std::vector<spec::DraftResult> propose_batch(const std::vector<spec::DraftAsk>& asks) override;
  void advance(uint64_t slot, const spec::Verdict& verdict) override;
  void finish(uint64_t slot) override;
  void end_group(uint64_t group) noexcept override;
  bool drafts_here() const override { return false; }
  // The rank's, as its answers report them.
  int64_t graph_warm_ups() const override { return graph_warm_ups_; }

  int rank() const { return rank_; }

 private:
  void check_available() const;
  // Sends `lesson` to the available peers, if it teaches anything.
  void teach(const spec::Lesson& lesson);

  // What a slot's lessons need: its group and its last tokens.
  struct Taught {
    uint64_t group = 0;
    std::vector<int32_t> tail;  // at most spec::lesson_context(drafter_) tokens
  };

  MpiEventLoop& loop_;
  int rank_;
  std::chrono::milliseconds timeout_;
  spec::DrafterKind drafter_;
  std::vector<int> peers_;
  std::map<uint64_t, Taught> taught_;  // slot -> its lesson state; only with peers
  std::atomic<int64_t> graph_warm_ups_{0};
};

}  // namespace seed::parallel
