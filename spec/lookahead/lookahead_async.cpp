// LookaheadEngine's asynchronous mode: the draft engine on a thread of its
// own keeps every tree gamma steps deep, while this thread has the target
// engine write the steps of every node drafted so far and commits.
#include <ATen/Parallel.h>
#include <omp.h>

#include <algorithm>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>

#include "spec/engine/team_threads.h"
#include "spec/lookahead/lookahead_engine.h"

namespace seed::spec {

void LookaheadEngine::run_async(std::vector<StepRun>& runs, const std::function<void()>& settle) {
  for (StepRun& run : runs) {
    if (run.running()) run.tree.emplace(run.committed);
  }
  // Everything below is shared between this thread (the target's) and the
  // draft's; the engines are called without the lock.
  std::mutex mutex;
  std::condition_variable changed;
  bool done = false;
  std::exception_ptr draft_error;
  int gamma = lookahead_.gamma;
  std::thread drafter([&] {
    init_aten_thread();
    omp_set_num_threads(lookahead_.draft_threads);
    const models::DeviceStream::Scope on_stream(draft_stream_);
    std::unique_lock lock(mutex);
    try {
      while (!done) {
        std::vector<GenRequest> batch;
        StepOwners owners;
        for (StepRun& run : runs) {
          if (!run.running()) continue;
          for (const StepTree::Id node : run.tree->to_expand(gamma)) ask_draft(run, node, batch, owners);
        }
        if (batch.empty()) {
          changed.notify_all();  // a root may have been marked expanded
          changed.wait(lock);
          continue;
        }
        lock.unlock();
        const Clock::time_point draft_start = Clock::now();
        std::vector<Completion> steps = draft_->generate(batch);
        const double seconds = seconds_since(draft_start);
        lock.lock();
        planner_.add_draft_call(seconds, steady_call(owners, &StepRun::drafted));
        take_drafts(std::move(steps), owners);
        changed.notify_all();
      }
    } catch (...) {
      if (!lock.owns_lock()) lock.lock();
      draft_error = std::current_exception();
      changed.notify_all();
    }
  });
  // However this thread leaves (a finished run, or an error), the draft's
  // thread stops after its current call.
  struct Stop {
    std::mutex& mutex;
    std::condition_variable& changed;
    bool& done;
    std::thread& drafter;
    ~Stop() {
      {
        std::lock_guard lock(mutex);
        done = true;
      }
      changed.notify_all();
      drafter.join();
    }
  } stop{mutex, changed, done, drafter};
  std::unique_lock lock(mutex);
  while (true) {
    if (draft_error) std::rethrow_exception(draft_error);
    std::vector<StepRun*> running;
    for (StepRun& run : runs) {
      if (run.running()) running.push_back(&run);
    }
    judge(running, true);
    bool judged = false;
    for (StepRun* run : running) {
      while (run->running() && commit_root(*run, true)) judged = true;
    }
    settle();
    if (std::none_of(runs.begin(), runs.end(), [](const StepRun& run) { return run.running(); })) break;
    if (judged) changed.notify_all();
    std::vector<GenRequest> batch;
    StepOwners owners;
    const int draft_length = planner_.token_draft_length(target_->stats());
    for (StepRun& run : runs) {
      if (run.running()) ask_target(run, false, draft_length, batch, owners);
    }
    if (batch.empty()) {
      changed.wait(lock);
      continue;
    }
    int64_t requests = 0;
    for (size_t b = 0; b < owners.size(); ++b) requests += b == 0 || owners[b].first != owners[b - 1].first;
    count_round(gamma, draft_length);
    steps_.request_rounds += requests;
    lock.unlock();
    const Clock::time_point target_start = Clock::now();
    const EngineStats before = forwards_before();
    std::vector<Completion> steps = target_->generate(batch);
    const double seconds = seconds_since(target_start);
    lock.lock();
    const bool steady = steady_call(owners, &StepRun::targeted);
    count_forwards(before, steady);
    planner_.add_target_call(static_cast<int>(batch.size() / static_cast<size_t>(requests)), seconds, steady);
    for (size_t b = 0; b < steps.size(); ++b) {
      StepTree& tree = *owners[b].first->tree;
      if (tree.contains(owners[b].second)) tree.set_target(owners[b].second, std::move(steps[b]));
    }
    gamma = planner_.async_gamma();
    changed.notify_all();  // a deeper lookahead has more to draft
  }
}

}  // namespace seed::spec
