// SeedEngine: scheduled speculative execution (SEED paper, section 3.2 and
// Algorithm 1), and its batched variant.
//
// Each drafter runs on its own worker thread and hosts the sequences
// assigned to it (round-robin, sticky for the whole request). A worker
// drafts for one of its sequences and puts the proposal on the verify
// queue; the target, on the calling thread, takes proposals from the queue
// and verifies them; the verdict goes back to the sequence's worker, which
// only then drafts that sequence again (the paper's rounds-scheduled rule:
// a drafter re-enters drafting after its proposal was verified). So drafting
// of some sequences overlaps verification of others.
//   seed        FCFS: one proposal per target forward, oldest first;
//   seed-batch  every ready proposal (up to max_batch) in one forward;
// or any Scheduler policy (spec/scheduler.h), e.g. by request priority.
// A drafter that reports ErrorKind::kUnavailable (a draft rank that died or
// stopped answering) is retired: its sequences restart on the least loaded
// live drafter from their accepted tokens, or, with none left, continue
// target-only. Any other drafter error ends that request with kError.
// The schedule never changes what a request generates: drafts and verdicts
// are keyed by the request's stream and positions (DESIGN.md, Determinism),
// so `seed` produces exactly serial `sd`'s (or `mcsd`'s) tokens.
#pragma once

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "spec/drafter.h"
#include "spec/engine.h"
#include "spec/request_run.h"
#include "spec/scheduler.h"
#include "spec/target.h"

namespace seed::spec {

// What the scheduler did, for tests and traces.
struct ScheduleEvent {
  enum Kind { kProposed, kVerified } kind;
  uint64_t slot;
  int worker;  // kProposed: the drafter's worker; kVerified: the batch number
};

class SeedEngine : public Engine {
 public:
  // One worker thread per drafter (at least one), each running its drafter
  // with `draft_threads` intra-op threads; `scheduler` picks what each
  // target forward verifies.
  SeedEngine(std::string name, std::unique_ptr<Target> target, std::vector<std::unique_ptr<Drafter>> drafters,
             RunSettings settings, Scheduler scheduler, int draft_threads);
  ~SeedEngine() override;

  using Engine::generate;
  std::vector<Completion> generate(const std::vector<GenRequest>& requests,
                                   const CompletionCallback& on_complete) override;
  std::string name() const override { return name_; }
  EngineStats stats() const override { return stats_; }
  void reset_stats() override { stats_ = {}; }
  // The last generate()'s schedule, in the order things happened.
  std::vector<ScheduleEvent> schedule() const;

 private:
  struct Task;
  struct Proposal;
  struct Worker;

  void work(Worker& worker);
  // Hands `task` to the sequence's drafter (or, with none left, queues an
  // empty draft for the target).
  void post(Sequence& seq, Task task);
  int live_worker_with_fewest(const std::vector<Sequence>& seqs) const;  // -1: none alive
  std::vector<Proposal> take_proposals();
  // Lets every worker finish what it holds for this generate() call.
  void drain();

  std::string name_;
  std::unique_ptr<Target> target_;
  RunSettings settings_;
  int draft_threads_;
  EngineStats stats_;

  mutable std::mutex mutex_;  // guards everything below
  std::condition_variable proposals_ready_;
  std::deque<Proposal> queue_;  // ready proposals, oldest first
  Scheduler scheduler_;
  std::vector<std::unique_ptr<Worker>> workers_;
  std::vector<int> owner_;  // per slot of the current call: its worker, -1 none (touched by the caller only)
  size_t next_worker_ = 0;  // where the next call's round-robin starts
  size_t busy_workers_ = 0;
  std::condition_variable idle_;
  bool stopping_ = false;
  std::vector<ScheduleEvent> schedule_;
};

}  // namespace seed::spec
