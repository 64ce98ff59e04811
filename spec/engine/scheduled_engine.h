// ScheduledEngine: every engine of seed is one loop around a Scheduler.
//
//   while requests run:
//     take the proposals the Scheduler picks from the ready ones;
//     verify them in one target forward;
//     apply each verdict: retire the finished requests (and the ones their
//     completion cancels), hand the others' verdicts back to their drafters,
//     whose next proposals join the queue when drafted.
//
// The engines differ in three settings only:
//   ar, sd, mcsd  one request at a time, drafted on the caller's thread
//                 (sd: a chain drafter, Leviathan/Chen; mcsd: a tree, k_config
//                 such as {2, 2, 1}, verified with tree attention; ar: none);
//   ar-batch      every request in flight, no drafter: each forward advances
//                 up to max_batch requests by one token (the SEED paper's
//                 "parallel" strategy);
//   seed          every request in flight, each drafter on its own thread
//                 (SEED, section 3.2 and Algorithm 1): a drafter drafts for
//                 one of its sequences and queues the proposal; the target
//                 verifies what the Scheduler picks (fcfs: one per forward,
//                 oldest first; seed-batch: every ready one up to max_batch;
//                 or by request priority); the verdict goes back to the
//                 sequence's drafter, which only then drafts it again.
//                 While no proposal is ready yet, the target computes the
//                 prompts of the requests started since (Target::prefill)
//                 instead of waiting for their first drafts.
// A drafter that reports ErrorKind::kUnavailable is retired: its sequences
// restart on the least loaded live drafter from their accepted tokens, or,
// with none left, continue target-only. Any other drafter error ends that
// request with kError. The schedule never changes what a request generates:
// drafts and verdicts are keyed by the request's stream and positions
// (models/base/counter_rng.h), so `seed` produces exactly `sd`'s tokens.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "spec/api/drafter.h"
#include "spec/engine/drafter_pool.h"
#include "spec/api/engine.h"
#include "spec/engine/request_run.h"
#include "spec/engine/scheduler.h"
#include "spec/api/target.h"
#include "spec/engine/verify_queue.h"

namespace seed::spec {

struct LoopSettings {
  size_t in_flight = 0;   // requests started at once; 0: the whole batch
  bool threaded = false;  // each drafter on its own thread
  int draft_threads = 1;  // intra-op threads per drafter thread
};

class ScheduledEngine : public Engine {
 public:
  ScheduledEngine(std::string name, std::unique_ptr<Target> target, std::vector<std::unique_ptr<Drafter>> drafters,
                  RunSettings settings, Scheduler scheduler, LoopSettings loop);

  // ar (no drafter), sd or mcsd (the draft shape is settings.k_config).
  static std::unique_ptr<ScheduledEngine> serial(std::string name, std::unique_ptr<Target> target,
                                                 std::unique_ptr<Drafter> drafter, RunSettings settings);
  // ar-batch.
  static std::unique_ptr<ScheduledEngine> lockstep(std::unique_ptr<Target> target, RunSettings settings,
                                                   Scheduler scheduler);
  // seed, seed-batch: one thread per drafter (at least one).
  static std::unique_ptr<ScheduledEngine> seed(std::string name, std::unique_ptr<Target> target,
                                               std::vector<std::unique_ptr<Drafter>> drafters, RunSettings settings,
                                               Scheduler scheduler, int draft_threads);

  using Engine::generate;
  std::vector<Completion> generate(const std::vector<GenRequest>& requests,
                                   const CompletionCallback& on_complete) override;
  std::string name() const override { return name_; }
  EngineStats stats() const override { return stats_; }
  // The draft shape it runs (k_config; pruned trees with their measured threshold).
  const RunSettings& settings() const { return settings_; }
  void reset_stats() override { stats_ = {}; }
  // The last generate()'s schedule, in the order things happened.
  std::vector<ScheduleEvent> schedule() const { return queue_.schedule(); }

 private:
  std::string name_;
  std::unique_ptr<Target> target_;
  RunSettings settings_;
  size_t in_flight_;
  EngineStats stats_;
  VerifyQueue queue_;
  DrafterPool drafters_;  // after queue_: its workers push into it
};

}  // namespace seed::spec
