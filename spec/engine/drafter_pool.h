// DrafterPool: the drafters that serve a batch's sequences, and where they
// run.
//
// Each sequence is assigned one drafter for its whole request (sticky
// round-robin over the live drafters, continued across calls so that small
// batches, such as a search's single thought, do not all land on one).
// Work for a sequence (start, apply a verdict, finish) goes to its drafter,
// and the proposal that follows goes to the VerifyQueue. Threaded, each
// drafter runs on its own worker thread, so drafting of some sequences
// overlaps verification of others (SEED); otherwise the work runs on the
// caller's thread as it is posted. A drafter that reports
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
              std::optional<PrunedTree> pruned_tree, bool threaded, int draft_threads, VerifyQueue& queue);
  ~DrafterPool();
  DrafterPool(const DrafterPool&) = delete;
  DrafterPool& operator=(const DrafterPool&) = delete;

  // Assigns a call's sequences to the live drafters (Sequence::drafter).
  void assign(std::vector<Sequence>& seqs);
  // Queues `task` on its sequence's drafter (or, with none, queues an empty
  // draft for the target). A start or advance that may draft nothing
  // (max_depth 0) queues its empty draft at once, so that a round without
  // a draft never waits for a drafter thread: the drafter learns the
  // verdict with its next task (Sequence::undrafted), or, if it never
  // started the sequence, starts it from every token so far at its first
  // draft. The caller's thread only, as are the others.
  void post(DraftTask task);
  // Moves `seq` to the live drafter with the fewest of the `running`
  // sequences; with none alive, `seq` continues target-only.
  void reassign(Sequence& seq, const std::vector<const Sequence*>& running);
  // Waits until every drafter has done the work it holds, then forgets the
  // proposals still queued (they point into the calls' sequences).
  void drain();
  // No drafter thread holds work now (so none starts any before the next
  // post). Always false unless threaded.
  bool idle();
  // The intra-op threads the drafter threads take when busy (0 unless
  // threaded).
  int busy_threads() const { return threaded_ ? static_cast<int>(workers_.size()) * draft_threads_ : 0; }

 private:
  struct Worker {
    int index = 0;
    bool dead = false;
    std::unique_ptr<Drafter> drafter;
    std::deque<DraftTask> inbox;
    std::condition_variable wake;
    std::thread thread;
  };

  void work(Worker& worker);
  // Under mutex_: no worker is busy or has work waiting.
  bool idle_locked() const;
  // Runs `task` on the worker's drafter (unlocked); the proposal, if the
  // task asks for one.
  Proposal run(Worker& worker, const DraftTask& task, bool dead);
  // Under mutex_: marks a worker dead on kUnavailable, queues the proposal.
  void deliver(Worker& worker, const DraftTask& task, Proposal proposal);

  std::string name_;
  std::vector<int> k_config_;
  std::optional<PrunedTree> pruned_tree_;
  bool threaded_;
  int draft_threads_;
  VerifyQueue& queue_;
  std::vector<std::unique_ptr<Worker>> workers_;
  size_t next_worker_ = 0;  // where the next call's round-robin starts

  std::mutex mutex_;  // guards the workers' inboxes and dead flags, and below
  std::condition_variable idle_;
  size_t busy_workers_ = 0;
  bool stopping_ = false;
};

}  // namespace seed::spec
