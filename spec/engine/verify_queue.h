// VerifyQueue: the proposals waiting for the target, and the Scheduler that
// picks which of them the next target forward verifies.
//
// Drafters push proposals as they finish them (from their own threads under
// SEED, or from the engine's thread); the engine takes what the Scheduler
// picks, blocking until something is ready. Thread-safe.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <vector>

#include "spec/engine/request_run.h"
#include "spec/engine/scheduler.h"

namespace seed::spec {

// A draft for one sequence, ready to verify (or the drafter's failure).
struct Proposal {
  Sequence* seq = nullptr;
  int64_t ready_at = 0;  // the scheduler's forward count when it was queued
  DraftTree draft;       // empty: the target decodes one token
  double draft_s = 0;    // its share of the time of the batch it was drafted in
  int64_t draft_batch = 1;  // the sequences of that batch
  bool draft_timed = true;  // no CUDA graph warmed up meanwhile: draft_s measures the drafter
  // Verdicts its drafter took in before drafting it: 1 in steady rounds,
  // more after rounds that drafted nothing (its draft_s then includes
  // catching up on their tokens), 0 for a sequence's first.
  int verdicts = 0;
  std::string error;         // the drafter failed; this request ends with kError...
  bool unavailable = false;  // ...unless the drafter is gone: then it moves
};

class VerifyQueue {
 public:
  explicit VerifyQueue(Scheduler scheduler) : scheduler_(scheduler) {}

  // Queues `proposals`, made together by drafter `worker` (-1: none): a
  // forward takes all of them or none yet.
  void push(std::vector<Proposal> proposals, int worker);
  // The proposals the next forward verifies, in the order picked; blocks
  // until at least one is ready.
  std::vector<Proposal> take();
  // Whether take() would block now.
  bool empty() const;
  // Scheduler::full_width, Scheduler::takes_every_ready.
  size_t full_width(size_t callers, size_t sequences) const;
  bool takes_every_ready() const { return scheduler_.takes_every_ready(); }
  // Counts a forward that verified `slots`.
  void verified(const std::vector<uint64_t>& slots);
  // Forgets the proposals still queued (they point into a finished call).
  void clear();
  // Keeps what push() and verified() see as ScheduleEvents from now on.
  void record_schedule();
  // Forgets the events kept so far and numbers forwards from 0 again (the
  // engine's reset_stats()).
  void restart_schedule();
  std::vector<ScheduleEvent> schedule() const;

 private:
  mutable std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<Proposal> queue_;  // oldest first
  Scheduler scheduler_;
  bool recording_ = false;
  std::vector<ScheduleEvent> schedule_;
  int forward_number_ = 0;
};

}  // namespace seed::spec
