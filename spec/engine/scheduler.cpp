#include "spec/engine/scheduler.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <numeric>

#include "models/base/error.h"

namespace seed::spec {

const char* schedule_policy_name(SchedulePolicy policy) {
  switch (policy) {
    case SchedulePolicy::kFcfs: return "fcfs";
    case SchedulePolicy::kBatch: return "batch";
    case SchedulePolicy::kPriority: return "priority";
  }
  return "";
}

SchedulePolicy parse_schedule_policy(const std::string& name) {
  for (const SchedulePolicy p : {SchedulePolicy::kFcfs, SchedulePolicy::kBatch, SchedulePolicy::kPriority}) {
    if (name == schedule_policy_name(p)) return p;
  }
  SEED_FAIL(kInvalidArgument) << "--schedule: unknown policy '" << name << "'; use fcfs | batch | priority";
}

Scheduler::Scheduler(SchedulePolicy policy, size_t max_batch, int64_t max_wait)
    : policy_(policy), max_batch_(max_batch), max_wait_(max_wait) {
  SEED_CHECK(max_batch >= 1, kInvalidArgument) << "scheduler: max_batch " << max_batch << " < 1";
  SEED_CHECK(max_wait >= 1, kInvalidArgument) << "scheduler: max_wait " << max_wait << " < 1";
}

size_t Scheduler::full_width(size_t callers, size_t sequences) const {
  return std::min(policy_ == SchedulePolicy::kFcfs ? std::min(callers, sequences) : sequences, max_batch_);
}

std::vector<size_t> Scheduler::pick(const std::vector<ReadyProposal>& ready) {
  SEED_CHECK(!ready.empty(), kInternal) << "scheduler: nothing to pick from";
  std::vector<size_t> order(ready.size());
  std::iota(order.begin(), order.end(), 0);
  if (policy_ == SchedulePolicy::kPriority) {
    const auto overdue = [&](size_t i) { return forwards_ - ready[i].ready_at >= max_wait_; };
    // Overdue ones first (oldest first), then by priority; stable, so equal
    // priorities keep their queue order.
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      if (overdue(a) != overdue(b)) return overdue(a);
      if (overdue(a)) return false;
      return ready[a].priority > ready[b].priority;
    });
  }
  // Callers in the order of their oldest proposal (the queue is oldest
  // first), each with its proposals in the policy's order; then turns.
  std::map<uint64_t, size_t> lane_of;
  for (const ReadyProposal& r : ready) lane_of.emplace(r.caller, lane_of.size());
  std::vector<std::vector<size_t>> lanes(lane_of.size());
  for (const size_t i : order) lanes[lane_of[ready[i].caller]].push_back(i);
  std::vector<size_t> picked;
  // fcfs: one turn (the oldest of each caller); the others: as many as fit.
  const size_t want = std::min(policy_ == SchedulePolicy::kFcfs ? lanes.size() : order.size(), max_batch_);
  for (size_t turn = 0; picked.size() < want; ++turn) {
    for (const std::vector<size_t>& lane : lanes) {
      if (turn < lane.size() && picked.size() < want) picked.push_back(lane[turn]);
    }
  }
  ++forwards_;
  return picked;
}

}  // namespace seed::spec
