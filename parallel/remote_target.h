// RemoteTarget: the coordinator's Target when the target model lives on a
// tensor-parallel group, ranks 1..T (README.md, "Running under mpirun";
// target_worker.h is the leader's end).
//
// start and finish become start and finish messages sent without waiting;
// verify sends one verify message with every item (one forward on the
// group) and blocks its caller on a future until the leader answers with
// the verdicts. room(), vocab_size() and max_positions() are answered here:
// each slot's cache length and pending count are tracked as ModelTarget
// keeps them (a verdict adds the pending tokens and the accepted path to the
// cache; the bonus token is then pending), so the engine never waits for
// them. All MPI goes through the coordinator's MpiEventLoop.
//
// Failures: a leader that died, or does not answer within `timeout`
// (kPrefillTimeoutFactor times as long for a verify that holds a slot's
// first forward, which prefills its prompt), makes start/verify throw
// seed::Error kUnavailable naming the rank: there is no other target, so
// the run ends there. An error message from the leader (its target threw) is
// thrown as kInternal with the leader's text.
// Not thread-safe (the Target contract): the engine's one target thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>

#include "parallel/mpi_event_loop.h"
#include "spec/api/target.h"

namespace seed::parallel {

// A slot's first verify also prefills its prompt, which for a long prompt
// takes many decode steps: it may take this many rank timeouts.
constexpr int kPrefillTimeoutFactor = 10;

class RemoteTarget final : public spec::Target {
 public:
  // `loop` is borrowed and must outlive this object; `leader` runs
  // serve_target_requests (target_worker.h) over a model with this
  // vocabulary and context. `target_top_k` > 0: verdicts carry the
  // target's top entries, for drafters that learn from them.
  RemoteTarget(MpiEventLoop& loop, int leader, int64_t vocab_size, int64_t max_positions,
               std::chrono::milliseconds timeout, int target_top_k = 0);
  // Finishes the slots still open, so the leader's caches do not outlive
  // the engine.
  ~RemoteTarget() override;

  int64_t vocab_size() const override { return vocab_size_; }
  int64_t max_positions() const override { return max_positions_; }
  void start(uint64_t slot, const std::vector<int32_t>& prompt, const spec::TargetSettings& settings) override;
  int64_t room(uint64_t slot) const override;
  std::vector<spec::Verdict> verify(const std::vector<spec::VerifyItem>& items) override;
  void finish(uint64_t slot) override;
  // The leader's, as of its last verdicts.
  spec::PrefillStats prefill_stats() const override { return prefill_; }

 private:
  struct Slot {
    int64_t length = 0;   // tokens in the leader's cache
    int64_t pending = 0;  // accepted tokens it feeds at the next forward
  };
  const Slot& slot_state(uint64_t slot) const;
  void check_available() const;

  MpiEventLoop& loop_;
  int leader_;
  int64_t vocab_size_;
  int64_t max_positions_;
  std::chrono::milliseconds timeout_;
  int target_top_k_;
  std::map<uint64_t, Slot> slots_;
  spec::PrefillStats prefill_;  // what this handle's verifies added
};

}  // namespace seed::parallel
