#include "spec/engine/drafter_pool.h"

#include <ATen/Parallel.h>
#include <omp.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <iterator>

#include "models/base/error.h"

namespace seed::spec {

DrafterPool::DrafterPool(std::string name, std::vector<std::unique_ptr<Drafter>> drafters, std::vector<int> k_config,
                         std::optional<PrunedTree> pruned_tree, bool threaded, int draft_threads, VerifyQueue& queue)
    : name_(std::move(name)),
      k_config_(std::move(k_config)),
      pruned_tree_(pruned_tree),
      threaded_(threaded),
      draft_threads_(draft_threads),
      queue_(queue) {
  SEED_CHECK(draft_threads >= 1, kInvalidArgument) << name_ << ": draft_threads " << draft_threads << " < 1";
  SEED_CHECK(drafters.empty() || !k_config_.empty(), kInvalidArgument) << name_ << ": empty draft shape";
  for (size_t i = 0; i < drafters.size(); ++i) {
    SEED_CHECK(drafters[i] != nullptr, kInvalidArgument) << name_ << ": drafter " << i << " is null";
    auto worker = std::make_unique<Worker>();
    worker->index = static_cast<int>(i);
    worker->drafter = std::move(drafters[i]);
    workers_.push_back(std::move(worker));
  }
  if (threaded_) {
    for (auto& worker : workers_) worker->thread = std::thread([this, w = worker.get()] { work(*w); });
  }
}

DrafterPool::~DrafterPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  for (auto& worker : workers_) {
    worker->wake.notify_all();
    if (worker->thread.joinable()) worker->thread.join();
  }
}

void DrafterPool::work(Worker& worker) {
  // Each thread has its own OpenMP team size; drafters stay small. ATen
  // sets a thread's size to the process's at its first parallel op, so it
  // goes first.
  at::internal::lazy_init_num_threads();
  omp_set_num_threads(draft_threads_);
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    worker.wake.wait(lock, [&] { return stopping_ || !worker.inbox.empty(); });
    if (worker.inbox.empty()) return;  // stopping, nothing left
    const DraftTask task = std::move(worker.inbox.front());
    worker.inbox.pop_front();
    const bool dead = worker.dead;
    ++busy_workers_;
    lock.unlock();
    Proposal proposal = run(worker, task, dead);
    lock.lock();
    // Queued before this worker counts as idle, so that drain() never
    // misses a proposal still on its way.
    deliver(worker, task, std::move(proposal));
    --busy_workers_;
    idle_.notify_all();
  }
}

Proposal DrafterPool::run(Worker& worker, const DraftTask& task, bool dead) {
  Proposal proposal;
  proposal.seq = task.seq;
  proposal.unavailable = dead;
  if (dead) return proposal;
  const Clock::time_point t0 = Clock::now();
  if (task.kind == DraftTask::kFinish) {
    try {
      worker.drafter->finish(task.slot);
    } catch (const std::exception&) {
      // Nothing waits for a finish; a drafter that failed reports it at its next proposal.
    }
    return proposal;
  }
  Sequence& seq = *task.seq;
  try {
    if (task.kind == DraftTask::kStart) {
      worker.drafter->start(seq.slot, task.tokens.empty() ? seq.prompt : task.tokens,
                            draft_settings(*seq.request, k_config_, pruned_tree_));
    } else {
      for (const Verdict& verdict : task.verdicts) worker.drafter->advance(seq.slot, verdict);
      proposal.verdicts = static_cast<int>(task.verdicts.size());
    }
    proposal.draft = worker.drafter->propose(seq.slot, task.max_depth);
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
  proposal.draft_s = seconds_since(t0);
  return proposal;
}

void DrafterPool::deliver(Worker& worker, const DraftTask& task, Proposal proposal) {
  if (proposal.unavailable && !worker.dead) {
    worker.dead = true;
    spdlog::warn("{}: {}; its sequences move to the other drafters", name_, proposal.error);
  }
  if (task.kind != DraftTask::kFinish) queue_.push(std::move(proposal), worker.index);
}

void DrafterPool::assign(std::vector<Sequence>& seqs) {
  std::vector<int> live;
  std::lock_guard<std::mutex> lock(mutex_);
  for (size_t w = 0; w < workers_.size(); ++w) {
    if (!workers_[w]->dead) live.push_back(static_cast<int>(w));
  }
  for (size_t i = 0; i < seqs.size(); ++i) seqs[i].drafter = live.empty() ? -1 : live[(next_worker_ + i) % live.size()];
  next_worker_ += seqs.size();
}

void DrafterPool::post(DraftTask task) {
  Sequence& seq = *task.seq;
  const int owner = seq.drafter;
  if (task.kind == DraftTask::kFinish) {
    const bool started = seq.drafter_started;
    seq.drafter_started = false;
    seq.undrafted.clear();
    task.seq = nullptr;
    if (owner < 0 || !started) return;
  } else if (owner < 0 || task.max_depth == 0) {
    // Nothing to draft: the empty proposal goes out at once, in the name of
    // the sequence's drafter, which learns the verdict with its next draft.
    if (task.kind == DraftTask::kStart) {
      seq.drafter_started = false;
      seq.undrafted.clear();
    } else if (seq.drafter_started) {
      seq.undrafted.insert(seq.undrafted.end(), std::make_move_iterator(task.verdicts.begin()),
                           std::make_move_iterator(task.verdicts.end()));
    }
    Proposal empty;
    empty.seq = &seq;
    queue_.push(std::move(empty), owner);
    return;
  } else if (task.kind == DraftTask::kStart) {
    seq.drafter_started = true;
    seq.undrafted.clear();
  } else if (!seq.drafter_started) {
    // Its drafter never started it (its rounds drafted nothing so far):
    // start it from every token so far, as a restart does.
    std::vector<int32_t> tokens = seq.prompt;
    const std::vector<int32_t>& generated = seq.output->tokens();
    tokens.insert(tokens.end(), generated.begin(), generated.end());
    task = DraftTask::start(seq, task.max_depth, std::move(tokens));
    seq.drafter_started = true;
  } else {
    task.verdicts.insert(task.verdicts.begin(), std::make_move_iterator(seq.undrafted.begin()),
                         std::make_move_iterator(seq.undrafted.end()));
    seq.undrafted.clear();
  }
  Worker& worker = *workers_[static_cast<size_t>(owner)];
  std::unique_lock<std::mutex> lock(mutex_);
  if (threaded_) {
    worker.inbox.push_back(std::move(task));
    worker.wake.notify_one();
    return;
  }
  const bool dead = worker.dead;
  lock.unlock();
  Proposal proposal = run(worker, task, dead);
  lock.lock();
  deliver(worker, task, std::move(proposal));
}

void DrafterPool::reassign(Sequence& seq, const std::vector<const Sequence*>& running) {
  std::vector<int> load(workers_.size(), 0);
  for (const Sequence* s : running) {
    if (!s->output->finished() && s->drafter >= 0) ++load[static_cast<size_t>(s->drafter)];
  }
  std::lock_guard<std::mutex> lock(mutex_);
  int best = -1;
  for (size_t w = 0; w < workers_.size(); ++w) {
    if (!workers_[w]->dead && (best < 0 || load[w] < load[static_cast<size_t>(best)])) best = static_cast<int>(w);
  }
  seq.drafter = best;
}

bool DrafterPool::idle_locked() const {
  if (busy_workers_ > 0) return false;
  return std::all_of(workers_.begin(), workers_.end(), [](const auto& worker) { return worker->inbox.empty(); });
}

void DrafterPool::drain() {
  std::unique_lock<std::mutex> lock(mutex_);
  idle_.wait(lock, [&] { return idle_locked(); });
  queue_.clear();
}

bool DrafterPool::idle() {
  std::lock_guard<std::mutex> lock(mutex_);
  return threaded_ && idle_locked();
}

}  // namespace seed::spec
