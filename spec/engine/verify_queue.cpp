#include <cstdint>

#include "spec/engine/verify_queue.h"

namespace seed::spec {

void VerifyQueue::push(std::vector<Proposal> proposals, int worker) {
  if (proposals.empty()) return;
  std::lock_guard<std::mutex> lock(mutex_);
  for (Proposal& proposal : proposals) {
    if (recording_) schedule_.push_back({ScheduleEvent::kProposed, proposal.seq->slot, worker});
    proposal.ready_at = scheduler_.forwards();
    queue_.push_back(std::move(proposal));
  }
  ready_.notify_one();
}

std::vector<Proposal> VerifyQueue::take() {
  std::unique_lock<std::mutex> lock(mutex_);
  ready_.wait(lock, [&] { return !queue_.empty(); });
  std::vector<ReadyProposal> ready;
  for (const Proposal& p : queue_) ready.push_back({p.seq->request->priority, p.ready_at, p.seq->caller});
  std::vector<Proposal> taken;
  std::vector<bool> gone(queue_.size(), false);
  for (const size_t i : scheduler_.pick(ready)) {
    taken.push_back(std::move(queue_[i]));
    gone[i] = true;
  }
  std::deque<Proposal> left;
  for (size_t i = 0; i < queue_.size(); ++i) {
    if (!gone[i]) left.push_back(std::move(queue_[i]));
  }
  queue_ = std::move(left);
  return taken;
}

size_t VerifyQueue::full_width(size_t callers, size_t sequences) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return scheduler_.full_width(callers, sequences);
}

bool VerifyQueue::empty() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return queue_.empty();
}

void VerifyQueue::verified(const std::vector<uint64_t>& slots) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (recording_) {
    for (const uint64_t slot : slots) schedule_.push_back({ScheduleEvent::kVerified, slot, forward_number_});
  }
  ++forward_number_;
}

void VerifyQueue::clear() {
  std::lock_guard<std::mutex> lock(mutex_);
  queue_.clear();
}

void VerifyQueue::record_schedule() {
  std::lock_guard<std::mutex> lock(mutex_);
  recording_ = true;
}

void VerifyQueue::restart_schedule() {
  std::lock_guard<std::mutex> lock(mutex_);
  schedule_.clear();
  forward_number_ = 0;
}

std::vector<ScheduleEvent> VerifyQueue::schedule() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return schedule_;
}

}  // namespace seed::spec
