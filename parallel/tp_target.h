// TpLeaderTarget: the Target of a model split over a tensor-parallel group.
//
// Every rank of the group holds a ModelTarget over its shard of the model
// (CausalLM loaded with the group, tp_shard.h). The group's rank 0, the
// leader, hands the engine (or the coordinator's proxy) a TpLeaderTarget:
// each start/verify/finish is broadcast to the other ranks, which replay it
// on their own target in serve_tp_target(). So every rank runs the same
// forwards (their collectives pair up) and, since the gathered logits and
// the verifier's draws are identical on every rank, keeps the same caches;
// the leader's verdicts are the group's.
//
// The calls travel as wire messages (wire.h) on `control`, a communicator
// for CPU tensors over the same ranks: the model's own MPI group, or, when
// the model's collectives run on NCCL, the MPI group NCCL was bootstrapped
// from. A peer waiting for the next call sleeps (broadcast_idle), never
// spinning a core. Not thread-safe: the engine's one target thread drives it.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "parallel/communicator.h"
#include "parallel/rank_usage.h"
#include "spec/engine/model_target.h"
#include "spec/api/target.h"

namespace seed::parallel {

class TpLeaderTarget final : public spec::Target {
 public:
  // `local`: the leader's own target over its shard. `control` is borrowed
  // and must outlive this object. REQUIRES control->rank() == 0 and every
  // other rank of `control` in serve_tp_target().
  TpLeaderTarget(std::unique_ptr<spec::ModelTarget> local, Communicator* control);
  // Sends shutdown: the other ranks' serve_tp_target() returns.
  ~TpLeaderTarget() override;

  int64_t vocab_size() const override;
  int64_t max_positions() const override;
  void start(uint64_t slot, const std::vector<int32_t>& prompt, const spec::TargetSettings& settings) override;
  int64_t room(uint64_t slot) const override;  // local: every rank's state is the same
  std::vector<spec::Verdict> verify(const std::vector<spec::VerifyItem>& items) override;
  void finish(uint64_t slot) override;
  spec::PrefillStats prefill_stats() const override;  // local: every rank's is the same
  // Every group rank's usage, in group rank order: `leader`'s own, then the
  // peers' (their world ranks follow the leader's).
  std::vector<RankUsage> group_usage(const RankUsage& leader);
  // How many of the target's top entries each verdict carries (0: none).
  // The leader's alone: the peers' verdicts are never read.
  void set_distribution_top_k(int k) { local_->set_distribution_top_k(k); }

 private:
  std::unique_ptr<spec::ModelTarget> local_;
  Communicator* control_;
};

// The loop of the group's other ranks: replays the leader's calls on
// `local` until the leader's TpLeaderTarget is destroyed, and returns this
// rank's statistics (requests: replayed verifies; busy: time in `local`'s
// calls). `leader_rank` (the leader's world rank, this rank's is
// leader_rank + control.rank()) names the sender in errors. A call that throws
// here threw on the leader too (same inputs, same state), where its caller
// sees it, so the loop goes on. Throws kCorruption for a message the leader
// cannot have sent.
WorkerStats serve_tp_target(spec::Target& local, Communicator& control, int leader_rank);

}  // namespace seed::parallel
