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
//                 (SEED, section 3.2 and Algorithm 1): a drafter drafts the
//                 sequences waiting for it side by side and queues their
//                 proposals; the target verifies what the Scheduler picks
//                 (fcfs: one per forward, oldest first; seed-batch: every
//                 ready one up to max_batch; or by request priority); the
//                 verdict goes back to the sequence's drafter, which only
//                 then drafts it again. When the target would wait (or
//                 its forward takes every ready draft), its thread drafts
//                 a waiting batch itself (DrafterPool::draft_here), so
//                 a request's first draft takes every core and its prompt
//                 is computed in the forward that verifies it. Only while
//                 draft ranks make the first drafts (their cores are not
//                 the target's) does the target compute the prompts of the
//                 requests started since (Target::prefill) meanwhile.
// A drafter that reports ErrorKind::kUnavailable is retired: its sequences
// restart on the least loaded live drafter from their accepted tokens, or,
// with none left, continue target-only. Any other drafter error ends that
// request with kError. The schedule never changes what a request generates:
// drafts and verdicts are keyed by the request's stream and positions
// (models/base/counter_rng.h), so `seed` produces exactly `sd`'s tokens.
//
// Many callers, one loop: several threads may be in generate() at once (a
// run solving several problems concurrently). Each call joins the loop that
// is running, its requests are started beside the others' (serial engines:
// one request at a time, the calls' requests taken in turns), the
// Scheduler serves the calls' proposals round-robin, and the call returns
// once its own requests are done. The loop runs on one caller's thread at a
// time: the caller that finds no loop running runs it until its own call is
// done, then hands it to a caller still waiting and lets its own OpenMP
// team go (each thread running forwards has a team of its own; an idle one
// spins on the cores the next one needs). Since every draft and
// verdict is keyed by its request, a request's tokens do not depend on the
// calls beside it.
#pragma once

#include <condition_variable>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "spec/api/drafter.h"
#include "spec/engine/draft_length_policy.h"
#include "spec/engine/team_width_policy.h"
#include "spec/engine/drafter_pool.h"
#include "spec/engine/loop_settings.h"
#include "spec/api/engine.h"
#include "spec/engine/request_run.h"
#include "spec/engine/scheduler.h"
#include "spec/api/target.h"
#include "spec/engine/verify_queue.h"

namespace seed::spec {

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
  bool serves_concurrent_calls() const override { return true; }
  std::string name() const override { return name_; }
  EngineStats stats() const override;
  // The draft shape it runs (k_config; pruned trees with their measured thresholds).
  DraftPlan draft_plan() const override;
  void reset_stats() override;
  void end_group(uint64_t group) noexcept override { drafters_.end_group(group); }
  void record_schedule() override { queue_.record_schedule(); }
  std::vector<ScheduleEvent> schedule() const override { return queue_.schedule(); }

 private:
  // One generate() call in the engine.
  struct Call {
    uint64_t id = 0;  // arrival order
    std::vector<Sequence> seqs;
    CompletionCallback on_complete;
    Clock::time_point start;
    size_t next = 0;         // its next sequence to start
    size_t unsettled = 0;    // sequences not yet settled
    std::exception_ptr error;  // set: the call throws it
    // Under mutex_, written by the loop:
    bool done = false;
    std::vector<Completion> completions;
  };

  // Runs the loop until `own` is done (the thread holds looping_).
  void loop_until(const Call& own);
  // Moves the submitted calls into the loop.
  void admit();
  // Starts sequences up to in_flight_ and what the target's KV cache holds,
  // the calls taking turns.
  void start_more();
  // The target's KV tokens `seq` can hold at its longest: prompt, every
  // token it may generate and a whole draft tree (capped at the context).
  int64_t kv_tokens_at_most(const Sequence& seq) const;
  // Admission, as vLLM's without preemption: a sequence starts when the
  // cache holds it at its longest beside every running sequence at theirs,
  // so requests in flight together never fill the cache (blocks shared by
  // prefix make this conservative); one starts alone whatever its size.
  bool fits_in_cache(int64_t tokens) const;
  // One target forward (and a prefill of new prompts while nothing is ready).
  void step();
  // Hands the completions of the calls that are done to their callers.
  void finish_calls();
  // The target failed: every call in the engine fails with `error`.
  void fail_all(std::exception_ptr error);
  // Settles `seq` and frees what it holds in the target.
  void free_target(Call& call, Sequence& seq);
  // Retires a finished request and the ones its completion cancels.
  // `drafter_holds_it`: false when the drafter already let go (it failed).
  void retire(Call& call, Sequence& seq, bool drafter_holds_it);
  // Hands `tasks` to the drafters together (DrafterPool::post).
  void post(std::vector<DraftTask> tasks);
  // Whether draft_length_ chooses `request`'s draft lengths: it sets none,
  // and its tokens do not depend on them (greedy, or top-token drafts).
  bool length_varies(const GenRequest& request) const;
  // The depth of the next draft of `seq` (draft_depth), its length chosen
  // by draft_length_ where that applies.
  int depth_of(const Sequence& seq);
  // What step() measured in a forward that computed no prompt, for
  // draft_length_, before the verdicts are applied: the proposals' draft
  // times (of steady rounds, Proposal::verdicts, where timed), the forward
  // (unset `verify_s`: untimed; `wider`: on the drafters' cores too), the
  // verdicts of chains whose length varies.
  void measure_round(const std::vector<Proposal*>& proposals, const std::vector<Sequence*>& verified,
                     const std::vector<Verdict>& verdicts, std::optional<double> verify_s, bool wider);
  // Adds one target operation to the stats: its time, the sequences it
  // verified, and its computed prompt tokens shared among `started` (the
  // sequences whose prompts it computed).
  void account(double seconds, const std::vector<Sequence*>& verified, const std::vector<Sequence*>& started,
               const PrefillStats& before);
  // Under mutex_: the target's prefill and KV counters, since reset_stats().
  void note_prefill(const PrefillStats& after);

  std::string name_;
  std::unique_ptr<Target> target_;
  RunSettings settings_;
  // Set with settings_.adaptive_draft_length, a chain and a drafter: the
  // draft lengths of the requests whose length varies.
  std::optional<DraftLengthPolicy> draft_length_;
  TeamWidthPolicy team_width_;  // the target's forwards on its team or on one thread
  size_t in_flight_;
  VerifyQueue queue_;
  DrafterPool drafters_;  // after queue_: its workers push into it

  mutable std::mutex mutex_;  // guards what follows, up to the loop's state
  std::condition_variable turn_;  // a call is done, or the loop is free
  bool looping_ = false;          // a caller runs the loop
  std::vector<std::shared_ptr<Call>> submitted_;  // not yet in the loop
  uint64_t next_call_ = 0;
  uint64_t next_slot_ = 0;
  size_t in_engine_ = 0;  // calls submitted and not done
  Clock::time_point busy_since_;
  EngineStats stats_;
  PrefillStats prefill_base_;    // the target's counters at reset_stats()
  PrefillStats target_prefill_;  // the target's counters after its latest operation

  // The loop's state: only the thread running the loop touches it (handed
  // from one to the next under mutex_).
  std::map<uint64_t, std::shared_ptr<Call>> calls_;  // by id
  uint64_t last_started_ = 0;  // the call that started a sequence last
  size_t running_ = 0;         // sequences started and not finished
  int64_t kv_reserved_ = 0;    // their kv_tokens, together
  std::vector<Sequence*> unseen_;  // started since the last prefill
};

}  // namespace seed::spec
