#include "spec/engine/drafter_pool.h"

#include <ATen/Parallel.h>
#include <omp.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <iterator>

#include "models/base/error.h"
#include "spec/engine/team_threads.h"

namespace seed::spec {

DrafterPool::DrafterPool(std::string name, std::vector<std::unique_ptr<Drafter>> drafters, std::vector<int> k_config,
                         std::optional<PrunedTree> pruned_tree, bool sample_drafts, bool threaded, int draft_threads,
                         VerifyQueue& queue)
    : name_(std::move(name)),
      k_config_(std::move(k_config)),
      pruned_tree_(pruned_tree),
      sample_drafts_(sample_drafts),
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
    if (threaded_ && worker->drafter->drafts_here()) busy_threads_ += draft_threads_;
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

namespace {

// The tasks at the front of `inbox` that run together: a finish alone, or
// every start and advance up to the next finish (drafted as one batch).
std::vector<DraftTask> take_batch(std::deque<DraftTask>& inbox) {
  std::vector<DraftTask> tasks;
  do {
    tasks.push_back(std::move(inbox.front()));
    inbox.pop_front();
  } while (tasks.front().kind != DraftTask::kFinish && !inbox.empty() && inbox.front().kind != DraftTask::kFinish);
  return tasks;
}

}  // namespace

void DrafterPool::work(Worker& worker) {
  // Each thread has its own OpenMP team size; drafters stay small.
  init_aten_thread();
  omp_set_num_threads(draft_threads_);
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    worker.wake.wait(lock, [&] { return stopping_ || (worker.called && !worker.busy && !worker.inbox.empty()); });
    if (worker.inbox.empty()) return;  // stopping, nothing left
    const std::vector<DraftTask> tasks = take_batch(worker.inbox);
    worker.called = !worker.inbox.empty();
    const bool dead = worker.dead;
    worker.busy = true;
    lock.unlock();
    std::vector<Proposal> proposals = run(worker, tasks, dead);
    lock.lock();
    // Queued before this worker counts as idle, so that drain() never
    // misses a proposal still on its way.
    deliver(worker, tasks, std::move(proposals));
    worker.busy = false;
    idle_.notify_all();
  }
}

void DrafterPool::wake_locked() {
  for (auto& worker : workers_) {
    if (worker->inbox.empty()) continue;
    worker->called = true;
    worker->wake.notify_one();
  }
}

void DrafterPool::wake() {
  if (!threaded_) return;
  std::lock_guard<std::mutex> lock(mutex_);
  wake_locked();
}

bool DrafterPool::draft_here(bool widen) {
  if (!threaded_) return false;
  std::unique_lock<std::mutex> lock(mutex_);
  Worker* here = nullptr;  // the idle drafter with the most work waiting
  for (auto& worker : workers_) {
    if (worker->busy || worker->inbox.empty()) continue;
    if (here == nullptr || worker->inbox.size() > here->inbox.size()) here = worker.get();
  }
  if (here == nullptr) return false;
  const std::vector<DraftTask> tasks = take_batch(here->inbox);
  const bool dead = here->dead;
  here->busy = true;
  here->called = false;
  wake_locked();
  lock.unlock();
  std::vector<Proposal> proposals;
  {
    const TeamThreads team(omp_get_max_threads() + (widen ? draft_threads_ : 0));
    proposals = run(*here, tasks, dead);
  }
  lock.lock();
  deliver(*here, tasks, std::move(proposals));
  here->busy = false;
  if (here->called) here->wake.notify_one();  // what came after the batch
  idle_.notify_all();
  return true;
}

void DrafterPool::fail(Worker& worker, Proposal& proposal, uint64_t slot, const std::exception& e) {
  const auto* error = dynamic_cast<const Error*>(&e);
  proposal.unavailable = error != nullptr && error->kind() == ErrorKind::kUnavailable;
  proposal.error = std::string("drafter ") + std::to_string(worker.index) + ": " + e.what();
  if (proposal.unavailable) return;
  try {
    worker.drafter->finish(slot);
  } catch (const std::exception&) {
    // Already failing; the request reports the first error.
  }
}

std::vector<Proposal> DrafterPool::run(Worker& worker, const std::vector<DraftTask>& tasks, bool dead) {
  std::vector<Proposal> proposals(tasks.size());
  for (size_t i = 0; i < tasks.size(); ++i) {
    proposals[i].seq = tasks[i].seq;
    proposals[i].unavailable = dead;
  }
  if (dead) return proposals;
  if (tasks.front().kind == DraftTask::kFinish) {
    try {
      worker.drafter->finish(tasks.front().slot);
    } catch (const std::exception&) {
      // Nothing waits for a finish; a drafter that failed reports it at its next proposal.
    }
    return proposals;
  }
  const Clock::time_point t0 = Clock::now();
  const int64_t warm_ups = worker.drafter->graph_warm_ups();
  std::vector<DraftAsk> asks;
  std::vector<size_t> asked;  // the task of each ask
  for (size_t i = 0; i < tasks.size(); ++i) {
    const DraftTask& task = tasks[i];
    const Sequence& seq = *task.seq;
    try {
      if (task.kind == DraftTask::kStart) {
        worker.drafter->start(seq.slot, task.tokens.empty() ? seq.prompt : task.tokens,
                              draft_settings(*seq.request, k_config_, pruned_tree_, sample_drafts_));
      } else {
        for (const Verdict& verdict : task.verdicts) worker.drafter->advance(seq.slot, verdict);
        proposals[i].verdicts = static_cast<int>(task.verdicts.size());
      }
      asks.push_back({seq.slot, task.max_depth});
      asked.push_back(i);
    } catch (const std::exception& e) {
      fail(worker, proposals[i], seq.slot, e);
    }
  }
  std::vector<DraftResult> results(asks.size());
  if (!asks.empty()) {
    try {
      results = worker.drafter->propose_batch(asks);
    } catch (...) {
      for (DraftResult& result : results) result.error = std::current_exception();
    }
  }
  for (size_t j = 0; j < results.size(); ++j) {
    if (!results[j].error) {
      proposals[asked[j]].draft = std::move(results[j].draft);
      continue;
    }
    try {
      std::rethrow_exception(results[j].error);
    } catch (const std::exception& e) {
      fail(worker, proposals[asked[j]], asks[j].slot, e);
    }
  }
  const double share = seconds_since(t0) / static_cast<double>(tasks.size());
  const bool timed = worker.drafter->graph_warm_ups() == warm_ups;
  for (Proposal& proposal : proposals) {
    proposal.draft_s = share;
    proposal.draft_batch = static_cast<int64_t>(tasks.size());
    proposal.draft_timed = timed;
  }
  return proposals;
}

void DrafterPool::deliver(Worker& worker, const std::vector<DraftTask>& tasks, std::vector<Proposal> proposals) {
  for (const Proposal& proposal : proposals) {
    if (proposal.unavailable && !worker.dead) {
      worker.dead = true;
      spdlog::warn("{}: {}; its sequences move to the other drafters", name_, proposal.error);
    }
  }
  if (tasks.front().kind != DraftTask::kFinish) queue_.push(std::move(proposals), worker.index);
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

bool DrafterPool::prepare(DraftTask& task, std::vector<Proposal>& empty) {
  Sequence& seq = *task.seq;
  const int owner = seq.drafter;
  if (task.kind == DraftTask::kFinish) {
    const bool started = seq.drafter_started;
    seq.drafter_started = false;
    seq.undrafted.clear();
    task.seq = nullptr;
    return owner >= 0 && started;
  }
  if (owner < 0 || task.max_depth == 0) {
    // Nothing to draft: the empty proposal goes out at once, in the name of
    // the sequence's drafter, which learns the verdict with its next draft.
    if (task.kind == DraftTask::kStart) {
      seq.drafter_started = false;
      seq.undrafted.clear();
    } else if (seq.drafter_started) {
      seq.undrafted.insert(seq.undrafted.end(), std::make_move_iterator(task.verdicts.begin()),
                           std::make_move_iterator(task.verdicts.end()));
    }
    Proposal proposal;
    proposal.seq = &seq;
    empty.push_back(std::move(proposal));
    return false;
  }
  if (task.kind == DraftTask::kStart) {
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
  return true;
}

void DrafterPool::post(std::vector<DraftTask> tasks) {
  // By owner: the empty proposals (index 0: none) and the drafters' tasks.
  std::vector<std::vector<Proposal>> empty(workers_.size() + 1);
  std::vector<std::deque<DraftTask>> work(workers_.size());
  for (DraftTask& task : tasks) {
    const int owner = task.seq->drafter;
    if (prepare(task, empty[static_cast<size_t>(owner + 1)])) {
      work[static_cast<size_t>(owner)].push_back(std::move(task));
    }
  }
  for (size_t i = 0; i < empty.size(); ++i) queue_.push(std::move(empty[i]), static_cast<int>(i) - 1);
  std::unique_lock<std::mutex> lock(mutex_);
  for (size_t w = 0; w < workers_.size(); ++w) {
    Worker& worker = *workers_[w];
    if (threaded_) {  // waits for wake() or draft_here()
      for (DraftTask& task : work[w]) {
        if (task.kind != DraftTask::kFinish || worker.busy || !worker.inbox.empty()) {
          worker.inbox.push_back(std::move(task));
          continue;
        }
        // A finish only frees what the slot holds: done here at once, so
        // that it keeps no drafter from counting as idle.
        worker.busy = true;
        const bool dead = worker.dead;
        lock.unlock();
        run(worker, {std::move(task)}, dead);
        lock.lock();
        worker.busy = false;
        idle_.notify_all();
      }
      continue;
    }
    while (!work[w].empty()) {
      const std::vector<DraftTask> batch = take_batch(work[w]);
      const bool dead = worker.dead;
      lock.unlock();
      std::vector<Proposal> proposals = run(worker, batch, dead);
      lock.lock();
      deliver(worker, batch, std::move(proposals));
    }
  }
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
  return std::all_of(workers_.begin(), workers_.end(),
                     [](const auto& worker) { return !worker->busy && worker->inbox.empty(); });
}

void DrafterPool::end_group(uint64_t group) noexcept {
  // workers_ and their drafters are fixed at construction; the drafters' end_group is thread-safe.
  for (const auto& worker : workers_) worker->drafter->end_group(group);
}

void DrafterPool::drain() {
  std::unique_lock<std::mutex> lock(mutex_);
  wake_locked();
  idle_.wait(lock, [&] { return idle_locked(); });
  queue_.clear();
}

bool DrafterPool::idle() {
  std::lock_guard<std::mutex> lock(mutex_);
  return threaded_ && idle_locked();
}

}  // namespace seed::spec
