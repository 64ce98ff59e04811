// ScheduledEngine's calls (scheduled_engine.h, "Many callers, one loop"):
// a call joins the loop, the thread that finds none running runs it until
// its own call is done, and finished calls get their completions back.
#include <ATen/Parallel.h>
#include <omp.h>

#include <algorithm>
#include <set>

#include "spec/engine/scheduled_engine.h"
#include "spec/engine/team_threads.h"

namespace seed::spec {

std::vector<Completion> ScheduledEngine::generate(const std::vector<GenRequest>& requests,
                                                  const CompletionCallback& on_complete) {
  auto call = std::make_shared<Call>();
  call->start = Clock::now();
  call->seqs = prepare_sequences(requests, settings_, *target_);
  call->on_complete = on_complete;
  std::unique_lock<std::mutex> lock(mutex_);
  call->id = next_call_++;
  for (Sequence& seq : call->seqs) {
    seq.slot = next_slot_++;
    seq.caller = call->id;
  }
  if (in_engine_++ == 0) busy_since_ = call->start;
  submitted_.push_back(call);
  while (!call->done) {
    if (looping_) {
      turn_.wait(lock);
      continue;
    }
    looping_ = true;
    lock.unlock();
    loop_until(*call);
    lock.lock();
    looping_ = false;
    turn_.notify_all();
    if (in_engine_ > 0) {
      // Another caller takes the loop over with its own OpenMP team, whose
      // cores this thread's team would spin on: let it go (on 2 cores, an
      // MCTS of 4 problems in flight ran at half the speed of one).
      lock.unlock();
      omp_pause_resource_all(omp_pause_soft);
      lock.lock();
    }
  }
  if (call->error) std::rethrow_exception(call->error);
  return std::move(call->completions);
}

void ScheduledEngine::loop_until(const Call& own) {
  // The target runs on whichever caller holds the loop: give this thread
  // the process's intra-op team size (ATen's, as the main thread has it).
  init_aten_thread();
  try {
    while (true) {
      admit();
      start_more();
      finish_calls();
      if (own.done) return;
      step();
    }
  } catch (...) {
    fail_all(std::current_exception());
  }
}

void ScheduledEngine::admit() {
  std::vector<std::shared_ptr<Call>> fresh;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    fresh.swap(submitted_);
  }
  for (const std::shared_ptr<Call>& call : fresh) {
    drafters_.assign(call->seqs);
    for (Sequence& seq : call->seqs) {
      if (seq.output->finished()) {
        settle(seq, 0);  // rejected by prepare_sequences
      } else {
        ++call->unsettled;
      }
    }
    calls_.emplace(call->id, call);
  }
}

void ScheduledEngine::finish_calls() {
  std::vector<std::shared_ptr<Call>> done;
  std::set<uint64_t> ids;
  for (auto it = calls_.begin(); it != calls_.end();) {
    const Call& call = *it->second;
    const bool quiet = call.unsettled == 0 && std::none_of(call.seqs.begin(), call.seqs.end(),
                                                           [](const Sequence& s) { return s.drafting; });
    if (!quiet) {
      ++it;
      continue;
    }
    ids.insert(call.id);
    done.push_back(it->second);
    it = calls_.erase(it);
  }
  if (done.empty()) return;
  unseen_.erase(std::remove_if(unseen_.begin(), unseen_.end(), [&](const Sequence* s) { return ids.count(s->caller); }),
                unseen_.end());
  // The drafters finish the last sequences before the engine goes idle.
  if (calls_.empty()) drafters_.drain();
  const PrefillStats target = target_->prefill_stats();  // the finished slots freed
  std::lock_guard<std::mutex> lock(mutex_);
  note_prefill(target);
  for (const std::shared_ptr<Call>& call : done) {
    call->completions = take_completions(call->seqs, stats_);
    call->done = true;
    if (--in_engine_ == 0) stats_.wall_s += seconds_since(busy_since_);
  }
  turn_.notify_all();
}

void ScheduledEngine::fail_all(std::exception_ptr error) {
  // No request can go on. Free the drafters' slots.
  drafters_.drain();
  for (const auto& entry : calls_) {
    for (Sequence& seq : entry.second->seqs) {
      if (seq.started && !seq.output->finished()) drafters_.post({DraftTask::finish(seq)});
    }
  }
  drafters_.drain();
  std::vector<std::shared_ptr<Call>> failed;
  for (auto& entry : calls_) failed.push_back(entry.second);
  calls_.clear();
  unseen_.clear();
  running_ = 0;
  kv_reserved_ = 0;
  std::lock_guard<std::mutex> lock(mutex_);
  for (const std::shared_ptr<Call>& call : submitted_) failed.push_back(call);
  submitted_.clear();
  for (const std::shared_ptr<Call>& call : failed) {
    call->error = error;
    call->done = true;
    if (--in_engine_ == 0) stats_.wall_s += seconds_since(busy_since_);
  }
  turn_.notify_all();
}

}  // namespace seed::spec
