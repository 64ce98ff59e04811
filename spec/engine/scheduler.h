// Scheduler: which of the ready proposals the target verifies next.
//
// The SEED engines' drafters queue proposals as they finish them; before
// each target forward the engine asks its Scheduler which ones to verify.
//   fcfs      the oldest, alone (the paper's rounds-scheduled queue: a
//             drafter re-enters drafting only after its proposal was
//             verified); with several callers, the oldest of each caller,
//             up to max_batch, so that a forward widens with the problems
//             in flight while each caller's proposals still go one by one;
//   batch     every ready one, oldest first, up to max_batch per forward;
//   priority  the most urgent first (GenRequest::priority, which searches
//             set from a node's score or rank), up to max_batch. So that
//             low priorities never starve, a proposal that waited
//             max_wait forwards goes before any priority, oldest first.
// Proposals come from the requests of several callers at once (the
// problems a run solves concurrently). Each policy orders one caller's
// proposals as above (priorities compare within a caller only), and the
// callers take turns: one proposal each, the caller with the oldest
// proposal first, until max_batch. So a caller's one request is verified
// in the first forward it could join (by age: behind at most the callers
// whose proposals are older), however many another caller queues.
// Pure bookkeeping; not thread-safe (the engine calls it under its lock).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace seed::spec {

enum class SchedulePolicy { kFcfs, kBatch, kPriority };

// "fcfs", "batch", "priority".
const char* schedule_policy_name(SchedulePolicy policy);
// Throws seed::Error kInvalidArgument naming --schedule and the known names.
SchedulePolicy parse_schedule_policy(const std::string& name);

struct ReadyProposal {
  double priority = 0;    // larger is more urgent
  int64_t ready_at = 0;   // Scheduler::forwards() when it was queued
  uint64_t caller = 0;    // whose request (the generate() call it came from)
};

class Scheduler {
 public:
  static constexpr int64_t kDefaultMaxWait = 8;

  Scheduler(SchedulePolicy policy, size_t max_batch, int64_t max_wait = kDefaultMaxWait);

  // Indices into `ready` (queued oldest first) of the proposals the next
  // forward verifies, in the order picked; counts a forward. REQUIRES ready
  // non-empty.
  std::vector<size_t> pick(const std::vector<ReadyProposal>& ready);
  int64_t forwards() const { return forwards_; }
  // How many proposals a forward takes when each of `sequences` running
  // sequences of `callers` callers has one ready: fcfs one per caller, the
  // others every one; at most max_batch.
  size_t full_width(size_t callers, size_t sequences) const;
  SchedulePolicy policy() const { return policy_; }
  // Whether a forward takes every ready proposal (up to max_batch): batch
  // and priority, not fcfs.
  bool takes_every_ready() const { return policy_ != SchedulePolicy::kFcfs; }

 private:
  SchedulePolicy policy_;
  size_t max_batch_;
  int64_t max_wait_;
  int64_t forwards_ = 0;
};

}  // namespace seed::spec
