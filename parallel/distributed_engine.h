// The engines of a run under mpirun (README.md, "Running under mpirun"):
// rank 0 builds them with a Coordinator, every other rank serves in
// serve_worker_rank() until the Coordinator goes.
//
// seed and seed-batch get one RemoteDrafter per draft rank, so each draft
// rank hosts the draft caches of the sequences the SEED engine assigns to
// its drafter (sticky for the request; the engine balances by slot). The
// other engines (ar, ar-batch, sd, mcsd) have at most one drafter, which
// runs on the coordinator. With --tp 0 the target runs on the coordinator
// too; with --tp T > 0 it is split over ranks 1..T and every engine
// verifies on a RemoteTarget talking to rank 1 (seed and seed-batch draft
// on local drafter threads if no draft rank is left). With model-free
// drafters every draft rank keeps its own STAND or ADED tables, and by
// default each verdict also teaches the other draft ranks' (DraftTables),
// so a group learns as one table would. Engines built by one
// Coordinator share the worker ranks' slots: use one at a time.
// Outputs equal the single-process engine's, token for token: drafts and
// verdicts are keyed by each request's stream and positions, never by rank.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <vector>

#include "parallel/draft_worker.h"
#include "parallel/mpi_event_loop.h"
#include "parallel/mpi_session.h"
#include "parallel/rank_layout.h"
#include "parallel/rank_usage.h"
#include "spec/api/engine.h"
#include "spec/engine/engine_factory.h"

namespace seed::parallel {

// How many rank timeouts rank 0 waits for the worker ranks to load their
// models and start serving.
constexpr int kLoadTimeoutFactor = 10;

// Whose verdicts the draft ranks' STAND and ADED tables of a group learn:
// kShared, every draft rank's learns from all of the group's requests
// (each verdict also goes to the other draft ranks as a lesson); kPerRank,
// each rank's only from the requests it drafts for.
enum class DraftTables { kShared, kPerRank };

class Coordinator {
 public:
  // `session` must outlive this object; its world rank must be 0 and every
  // other rank must be in serve_worker_rank() with the same layout.
  Coordinator(const MpiSession& session, const RankLayout& layout, std::chrono::milliseconds rank_timeout,
              DraftTables tables = DraftTables::kShared);
  // Calls shut_down() unless the caller did.
  ~Coordinator();
  Coordinator(const Coordinator&) = delete;
  Coordinator& operator=(const Coordinator&) = delete;

  // As spec::make_engine (same errors), with remote drafters for seed and
  // seed-batch (options.drafters is ignored: one per draft rank) and, with
  // tp > 0, the remote target. Throws kInvalidArgument for seed and
  // seed-batch if the layout has no draft rank and tp = 0. With tp > 0 the
  // engine throws kUnavailable naming rank 1 if the group is lost.
  // The engine borrows this Coordinator and must be destroyed before it.
  std::unique_ptr<spec::Engine> make_engine(const spec::EngineOptions& options);

  const RankLayout& layout() const { return layout_; }
  // Draft ranks that died or stopped answering so far, for the fault report.
  std::vector<int> lost_ranks() const;
  // Whether the target group's leader died or stopped answering (tp > 0).
  bool target_lost() const;
  // Waits until every worker rank serves, at most kLoadTimeoutFactor times
  // the rank timeout: the target group's ranks load their shards first,
  // and a rank still loading would miss its first message's rank timeout.
  // One that does not answer by then counts as lost (lost_ranks(),
  // target_lost()).
  void wait_for_workers();
  // Ends the worker ranks' loops: sends every draft rank and the target
  // group's leader a shutdown and waits, at most the rank timeout, for the
  // last usage each answers with as it leaves. One that does not answer
  // counts as lost (lost_ranks(), target_lost()): a stopped rank would hold
  // every rank at MPI_Finalize. A rank lost before gets the shutdown too,
  // unanswered (it may only have been slow). Only the first call does this.
  void shut_down();
  // Coordinator-side messages and bytes, over every engine so far (usage
  // requests left out).
  MessageCounts counts() const { return loop_.counts(); }
  // Every rank's usage since it started serving, in rank order: rank 0's
  // (its process CPU time as busy) and, by asking them, each target group
  // and draft rank's; ranks lost so far are left out. Call between engine
  // runs, not while an engine generates. Throws kCorruption naming a rank
  // that answers with something else.
  std::vector<RankUsage> usage();

 private:
  // Runs `ask(rank, request tag, reply tag)` for every draft rank and the
  // target group's leader, side by side, so that ranks that do not answer
  // cost one timeout in all.
  void on_every_worker(const std::function<void(int, int, int)>& ask);
  // A proxy for draft rank `rank`, teaching the others with kShared tables.
  std::unique_ptr<spec::Drafter> remote_drafter(int rank, spec::DrafterKind drafter);

  RankLayout layout_;
  std::chrono::milliseconds rank_timeout_;
  DraftTables tables_;
  MpiEventLoop loop_;
  UsageMeter meter_{0};
  bool shut_down_ = false;
};

// What every rank but 0 runs until the Coordinator's shutdown: a draft rank
// makes the drafter of `models.drafter` (loading `models.draft`) before it
// serves draft requests, and other drafters on their first start; a target
// rank loads its shard of `models.target` and serves the target group (rank
// 1 answers the coordinator, the others replay its calls) over the
// session's group of the target ranks. Models load through
// models.loaded_models where set, so that a later call (a sweep's next
// point) gets the models an earlier one loaded. Returns the rank's
// statistics. `fault` is for draft ranks in tests. Throws what loading a
// model throws.
WorkerStats serve_worker_rank(MpiSession& session, const RankLayout& layout, const spec::EngineOptions& models,
                              const DraftWorkerFault& fault = {});

}  // namespace seed::parallel
