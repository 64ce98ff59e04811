#include "spec/seed_engine.h"

#include <omp.h>
#include <spdlog/spdlog.h>

#include "models/base/error.h"

namespace seed::spec {

// Work for a drafter: start a sequence or apply its verdict, then propose.
struct SeedEngine::Task {
  enum Kind { kStart, kAdvance, kFinish } kind = kStart;
  Sequence* seq = nullptr;
  Verdict verdict;    // kAdvance
  int max_depth = 0;  // kStart, kAdvance
  std::vector<int32_t> accepted;  // kStart after a fault: prompt + generated (empty: the prompt)
};

struct SeedEngine::Proposal {
  Sequence* seq = nullptr;
  int64_t ready_at = 0;  // the scheduler's forward count when it was queued
  DraftTree draft;
  double draft_s = 0;
  std::string error;         // the drafter failed; this request ends with kError...
  bool unavailable = false;  // ...unless the drafter is gone: then it moves
};

struct SeedEngine::Worker {
  int index = 0;
  bool dead = false;  // its drafter reported kUnavailable; it serves no more work
  std::unique_ptr<Drafter> drafter;
  std::deque<Task> inbox;
  std::condition_variable wake;
  std::thread thread;
};

SeedEngine::SeedEngine(std::string name, std::unique_ptr<Target> target,
                       std::vector<std::unique_ptr<Drafter>> drafters, RunSettings settings, Scheduler scheduler,
                       int draft_threads)
    : name_(std::move(name)),
      target_(std::move(target)),
      settings_(std::move(settings)),
      draft_threads_(draft_threads),
      scheduler_(scheduler) {
  SEED_CHECK(!drafters.empty(), kInvalidArgument) << name_ << ": needs at least one drafter";
  SEED_CHECK(draft_threads >= 1, kInvalidArgument) << name_ << ": draft_threads " << draft_threads << " < 1";
  SEED_CHECK(!settings_.k_config.empty(), kInvalidArgument) << name_ << ": empty draft shape";
  for (size_t i = 0; i < drafters.size(); ++i) {
    auto worker = std::make_unique<Worker>();
    worker->index = static_cast<int>(i);
    worker->drafter = std::move(drafters[i]);
    workers_.push_back(std::move(worker));
  }
  for (auto& worker : workers_) worker->thread = std::thread([this, w = worker.get()] { work(*w); });
}

SeedEngine::~SeedEngine() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  for (auto& worker : workers_) {
    worker->wake.notify_all();
    worker->thread.join();
  }
}

void SeedEngine::work(Worker& worker) {
  // Each thread has its own OpenMP team size; drafters stay small.
  omp_set_num_threads(draft_threads_);
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    worker.wake.wait(lock, [&] { return stopping_ || !worker.inbox.empty(); });
    if (worker.inbox.empty()) return;  // stopping, nothing left
    Task task = std::move(worker.inbox.front());
    worker.inbox.pop_front();
    const bool dead = worker.dead;
    ++busy_workers_;
    lock.unlock();

    Sequence& seq = *task.seq;
    Proposal proposal{&seq, 0, {}, 0, {}, dead};
    const bool propose = task.kind != Task::kFinish;
    const Clock::time_point t0 = Clock::now();
    if (!dead) {
      try {
        if (task.kind == Task::kStart) {
          worker.drafter->start(seq.slot, task.accepted.empty() ? seq.prompt : task.accepted,
                                draft_settings(*seq.request, settings_.k_config));
        } else if (task.kind == Task::kAdvance) {
          worker.drafter->advance(seq.slot, task.verdict);
        } else {
          worker.drafter->finish(seq.slot);
        }
        if (propose) proposal.draft = worker.drafter->propose(seq.slot, task.max_depth);
      } catch (const std::exception& e) {
        const auto* error = dynamic_cast<const Error*>(&e);
        proposal.unavailable = error != nullptr && error->kind() == ErrorKind::kUnavailable;
        proposal.error = std::string("drafter ") + std::to_string(worker.index) + ": " + e.what();
        if (!proposal.unavailable) {
          try {
            worker.drafter->finish(seq.slot);
          } catch (const std::exception&) {
            // Already failing; the request reports the first error.
          }
        }
      }
    }
    proposal.draft_s = seconds_since(t0);

    lock.lock();
    --busy_workers_;
    if (proposal.unavailable && !worker.dead) {
      worker.dead = true;
      spdlog::warn("{}: {}; its sequences move to the other drafters", name_, proposal.error);
    }
    if (propose) {
      schedule_.push_back({ScheduleEvent::kProposed, seq.slot, worker.index});
      proposal.ready_at = scheduler_.forwards();
      queue_.push_back(std::move(proposal));
      proposals_ready_.notify_one();
    }
    idle_.notify_all();
  }
}

void SeedEngine::post(Sequence& seq, Task task) {
  task.seq = &seq;
  std::lock_guard<std::mutex> lock(mutex_);
  const int owner = owner_[seq.slot];
  if (owner < 0) {
    // No drafter left: the target decodes this sequence alone (empty drafts).
    if (task.kind != Task::kFinish) {
      queue_.push_back({&seq, scheduler_.forwards(), {}, 0, {}, false});
      proposals_ready_.notify_one();
    }
    return;
  }
  Worker& worker = *workers_[static_cast<size_t>(owner)];
  worker.inbox.push_back(std::move(task));
  worker.wake.notify_one();
}

int SeedEngine::live_worker_with_fewest(const std::vector<Sequence>& seqs) const {
  std::vector<int> load(workers_.size(), 0);
  for (const Sequence& seq : seqs) {
    if (!seq.output->finished() && owner_[seq.slot] >= 0) ++load[static_cast<size_t>(owner_[seq.slot])];
  }
  std::lock_guard<std::mutex> lock(mutex_);
  int best = -1;
  for (size_t w = 0; w < workers_.size(); ++w) {
    if (!workers_[w]->dead && (best < 0 || load[w] < load[static_cast<size_t>(best)])) best = static_cast<int>(w);
  }
  return best;
}

std::vector<SeedEngine::Proposal> SeedEngine::take_proposals() {
  std::unique_lock<std::mutex> lock(mutex_);
  proposals_ready_.wait(lock, [&] { return !queue_.empty(); });
  std::vector<ReadyProposal> ready;
  for (const Proposal& p : queue_) ready.push_back({p.seq->request->priority, p.ready_at});
  const std::vector<size_t> picked = scheduler_.pick(ready);
  std::vector<Proposal> taken;
  std::vector<bool> gone(queue_.size(), false);
  for (size_t i : picked) {
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

std::vector<ScheduleEvent> SeedEngine::schedule() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return schedule_;
}

std::vector<Completion> SeedEngine::generate(const std::vector<GenRequest>& requests,
                                             const CompletionCallback& on_complete) {
  const Clock::time_point start = Clock::now();
  const PrefillStats prefill_before = target_->prefill_stats();
  std::vector<Sequence> seqs = prepare_sequences(requests, settings_, *target_);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    schedule_.clear();
  }
  const int shape_depth = static_cast<int>(settings_.k_config.size());
  // Sticky round-robin over the live drafters, continued across calls so
  // that small batches (a search's single thought) do not all land on one.
  owner_.assign(seqs.size(), -1);
  {
    std::vector<int> live;
    std::lock_guard<std::mutex> lock(mutex_);
    for (size_t w = 0; w < workers_.size(); ++w) {
      if (!workers_[w]->dead) live.push_back(static_cast<int>(w));
    }
    for (size_t i = 0; i < seqs.size() && !live.empty(); ++i) owner_[i] = live[(next_worker_ + i) % live.size()];
    next_worker_ += seqs.size();
  }
  size_t active = 0;
  double target_s = 0;
  int64_t forwards = 0;
  const auto free_target = [&](Sequence& seq) {
    settle(seq, seconds_since(start));
    target_->finish(seq.slot);
    --active;
  };
  // Retires a finished sequence (its drafter is told by the caller) and the
  // ones cancelled in reply: their proposals still queued or being drafted
  // are dropped when they arrive.
  const auto retire = [&](Sequence& seq) {
    free_target(seq);
    for (Sequence* cancelled : cancelled_by(on_complete, seq, seqs)) {
      free_target(*cancelled);
      post(*cancelled, {Task::kFinish, nullptr, {}, 0});
    }
  };
  try {
    for (Sequence& seq : seqs) {
      if (seq.output->finished()) continue;
      target_->start(seq.slot, seq.prompt, target_settings(*seq.request));
      ++active;
      post(seq, {Task::kStart, nullptr, {}, draft_depth(seq, *target_, shape_depth)});
    }
    int batch_number = 0;
    while (active > 0) {
      std::vector<Proposal> taken = take_proposals();
      std::vector<VerifyItem> items;
      std::vector<Proposal*> verified;
      for (Proposal& p : taken) {
        if (p.seq->output->finished()) continue;  // cancelled while drafting
        if (p.unavailable) {
          // Its drafter is gone: restart the sequence on another one from
          // everything accepted so far (drafts depend only on those tokens).
          Sequence& seq = *p.seq;
          owner_[seq.slot] = live_worker_with_fewest(seqs);
          stats_.drafter_faults += 1;
          std::vector<int32_t> accepted = seq.prompt;
          const std::vector<int32_t>& generated = seq.output->tokens();
          accepted.insert(accepted.end(), generated.begin(), generated.end());
          post(seq, {Task::kStart, nullptr, {}, draft_depth(seq, *target_, shape_depth), std::move(accepted)});
          continue;
        }
        if (!p.error.empty()) {
          p.seq->output->end(FinishReason::kError, p.error);
          retire(*p.seq);
          continue;
        }
        p.seq->stats.draft_s += p.draft_s;
        items.push_back({p.seq->slot, &p.draft});
        verified.push_back(&p);
      }
      if (items.empty()) continue;
      const Clock::time_point t0 = Clock::now();
      const std::vector<Verdict> verdicts = target_->verify(items);
      const double verify_s = seconds_since(t0);
      target_s += verify_s;
      forwards += 1;
      {
        std::lock_guard<std::mutex> lock(mutex_);
        for (Proposal* p : verified) schedule_.push_back({ScheduleEvent::kVerified, p->seq->slot, batch_number});
      }
      ++batch_number;
      for (size_t i = 0; i < verified.size(); ++i) {
        Sequence& seq = *verified[i]->seq;
        seq.stats.verify_s += verify_s / static_cast<double>(verified.size());
        if (seq.output->finished()) continue;  // cancelled by a request retired before it
        bool done = apply_verdict(seq, verified[i]->draft, verdicts[i]);
        const int depth = done ? 0 : draft_depth(seq, *target_, shape_depth);
        if (!done && depth < 0) {
          seq.output->end(FinishReason::kContext);
          done = true;
        }
        if (done) {
          retire(seq);
          post(seq, {Task::kFinish, nullptr, {}, 0});
        } else {
          post(seq, {Task::kAdvance, nullptr, verdicts[i], depth});
        }
      }
    }
  } catch (...) {
    // The target failed: no request can go on. Free the drafters' slots.
    drain();
    for (Sequence& seq : seqs) {
      if (!seq.output->finished()) post(seq, {Task::kFinish, nullptr, {}, 0});
    }
    drain();
    throw;
  }
  drain();
  return take_completions(seqs, stats_, seconds_since(start), target_s, forwards, prefill_before,
                          target_->prefill_stats());
}

void SeedEngine::drain() {
  // Workers may still hold tasks for this call's sequences (finish, or
  // drafting for a request the target gave up on): wait until they are done
  // and forget leftover proposals, which point into the call's sequences.
  std::unique_lock<std::mutex> lock(mutex_);
  idle_.wait(lock, [&] {
    if (busy_workers_ > 0) return false;
    for (const auto& worker : workers_) {
      if (!worker->inbox.empty()) return false;
    }
    return true;
  });
  queue_.clear();
}

}  // namespace seed::spec
