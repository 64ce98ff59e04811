// DrafterPool: the drafters that serve a batch's sequences, and where they
// run.
//
// Each sequence is assigned one drafter for its whole request (sticky
// round-robin over the live drafters, continued across calls so that small
// batches, such as a search's single thought, do not all land on one).
// Work for a sequence (start, apply a verdict, finish) goes to its drafter,
// and the proposal that follows goes to the VerifyQueue. A drafter drafts
// the sequences waiting for it as one batch (Drafter::propose_batch), and
// their proposals join the queue together. Threaded, each drafter has its
// own worker thread, so drafting of some sequences overlaps verification
// of others (SEED), and the target's thread may draft a waiting batch
// itself (draft_here); otherwise the work runs on the caller's thread as
// it is posted. A drafter that reports
// ErrorKind::kUnavailable (a draft rank that died or stopped answering) is
// dead from then on; the engine moves its sequences with reassign(). With
// no live drafter (or none at all: autoregressive engines), a sequence's
// proposals are empty drafts.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "spec/api/drafter.h"
#include "spec/engine/request_run.h"
#include "spec/engine/verify_queue.h"

namespace seed::spec {

struct DraftTask {
  enum Kind { kStart, kAdvance, kFinish } kind = kStart;
  // kFinish: only `slot` is read once queued, so that the sequence (and the
  // call it belongs to) may end before its drafter gets to it.
  Sequence* seq = nullptr;
  uint64_t slot = 0;
  std::vector<Verdict> verdicts;  // kAdvance: the drafter applies them in order
  int max_depth = 0;              // kStart, kAdvance
  std::vector<int32_t> tokens;    // kStart: what to start from (empty: the prompt)

  static DraftTask start(Sequence& seq, int max_depth, std::vector<int32_t> tokens = {}) {
    return {kStart, &seq, seq.slot, {}, max_depth, std::move(tokens)};
  }
  static DraftTask advance(Sequence& seq, Verdict verdict, int max_depth) {
    return {kAdvance, &seq, seq.slot, {std::move(verdict)}, max_depth, {}};
  }
  static DraftTask finish(Sequence& seq) { return {kFinish, &seq, seq.slot, {}, 0, {}}; }
};

class DrafterPool {
 public:
  // `threaded`: one worker thread per drafter, each with `draft_threads`
  // intra-op threads. `name` labels warnings.
  DrafterPool(std::string name, std::vector<std::unique_ptr<Drafter>> drafters, std::vector<int> k_config,
              std::optional<PrunedTree> pruned_tree, bool sample_drafts, bool threaded, int draft_threads,
              VerifyQueue& queue);
  ~DrafterPool();
  DrafterPool(const DrafterPool&) = delete;
  DrafterPool& operator=(const DrafterPool&) = delete;

  // Assigns a call's sequences to the live drafters (Sequence::drafter).
  void assign(std::vector<Sequence>& seqs);
  // Queues `tasks` on their sequences' drafters (or, with none, queues
  // empty drafts for the target). A drafter takes the starts and advances
  // that wait for it together and drafts them as one batch
  // (Drafter::propose_batch), so a round's tasks go in one call. A start or
  // advance that may draft nothing (max_depth 0) queues its empty draft at
  // once, so that a round without a draft never waits for a drafter
  // thread: the drafter learns the verdict with its next task
  // (Sequence::undrafted), or, if it never started the sequence, starts it
  // from every token so far at its first draft. The caller's thread only,
  // as are the others.
  void post(std::vector<DraftTask> tasks);
  // Moves `seq` to the live drafter with the fewest of the `running`
  // sequences; with none alive, `seq` continues target-only.
  void reassign(Sequence& seq, const std::vector<const Sequence*>& running);
  // Threaded, posted work waits for one of these two (the target's loop
  // decides who drafts it):
  // wake() hands every drafter's waiting work to its own thread, to draft
  // while the target works (before each target forward);
  // draft_here() drafts one waiting batch on the calling thread, its team
  // widened by the idle drafter thread's cores where `widen`, and hands
  // the other drafters' waiting work to their threads; false when no batch
  // waits for an idle drafter. A target with nothing to verify drafts so, rather
  // than leave its cores idle while the drafter threads take theirs: with
  // one drafter, a round is drafted as one batch on every core, then
  // verified on every core.
  void wake();
  bool draft_here(bool widen);
  // Waits until every drafter has done the work it holds, then forgets the
  // proposals still queued (they point into the calls' sequences).
  void drain();
  // Tells every drafter that no request of `group` follows
  // (Drafter::end_group). Unlike the others, from any thread.
  void end_group(uint64_t group) noexcept;
  // No drafter holds work now (so none starts any before the next post).
  // Always false unless threaded.
  bool idle();
  // The intra-op threads the drafter threads take on this process's cores
  // when busy (0 unless threaded; 0 for drafters whose drafts are computed
  // elsewhere, Drafter::drafts_here).
  int busy_threads() const { return busy_threads_; }

 private:
  struct Worker {
    int index = 0;
    bool dead = false;
    bool busy = false;    // a batch of its drafter runs (on its thread or another)
    bool called = false;  // its thread may take the work in its inbox (wake())
    std::unique_ptr<Drafter> drafter;
    std::deque<DraftTask> inbox;
    std::condition_variable wake;
    std::thread thread;
  };

  void work(Worker& worker);
  // Under mutex_: no worker is busy or has work waiting.
  bool idle_locked() const;
  // Under mutex_: wake()'s work.
  void wake_locked();
  // What post() does with `task` before a drafter sees it: false when no
  // drafter is to run it (an empty draft, appended to `empty`, or a finish
  // of a sequence its drafter never started).
  bool prepare(DraftTask& task, std::vector<Proposal>& empty);
  // Runs a batch (take_batch) on the worker's drafter (unlocked): a
  // proposal per task, ignored for a finish.
  std::vector<Proposal> run(Worker& worker, const std::vector<DraftTask>& tasks, bool dead);
  // `proposal` of `slot` failed with `e`: kUnavailable marks it so (its
  // sequence moves), anything else is its request's error and the slot is
  // finished.
  void fail(Worker& worker, Proposal& proposal, uint64_t slot, const std::exception& e);
  // Under mutex_: marks a worker dead on kUnavailable, queues the proposals.
  void deliver(Worker& worker, const std::vector<DraftTask>& tasks, std::vector<Proposal> proposals);

  std::string name_;
  std::vector<int> k_config_;
  std::optional<PrunedTree> pruned_tree_;
  bool sample_drafts_;
  bool threaded_;
  int draft_threads_;
  int busy_threads_ = 0;
  VerifyQueue& queue_;
  std::vector<std::unique_ptr<Worker>> workers_;
  size_t next_worker_ = 0;  // where the next call's round-robin starts

  std::mutex mutex_;  // guards the workers' inboxes and dead flags, and below
  std::condition_variable idle_;
  bool stopping_ = false;
};

}  // namespace seed::spec
