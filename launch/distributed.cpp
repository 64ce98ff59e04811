#include "launch/distributed.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdlib>

#include "models/error.h"
#include "parallel/distributed_engine.h"

namespace seed::launch {

bool launched_by_mpirun() { return std::getenv("OMPI_COMM_WORLD_SIZE") || std::getenv("PMIX_RANK"); }

void add_distributed_options(CLI::App& app, GlobalOptions& global) {
  app.add_option("--tp", global.tp,
                 "Under mpirun: target group size on ranks 1..T (0: the target stays on rank 0, every other rank "
                 "drafts)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--rank-timeout", global.rank_timeout_ms,
                 "Under mpirun: milliseconds rank 0 waits for a draft rank's answer before it moves that rank's "
                 "sequences elsewhere and reports the rank lost")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.fallthrough();  // `seed run ... --tp 2`, as well as `seed --tp 2 run ...`
}

void run_with_engines(const GlobalOptions& global, const spec::EngineOptions& models,
                      const std::function<void(const EngineMaker&)>& work) {
  if (!global.mpi || global.mpi->world_size() == 1) {
    work([](const spec::EngineOptions& o) { return spec::make_engine(o); });
    return;
  }
  const parallel::RankLayout layout = parallel::RankLayout::make(global.mpi->world_size(), global.tp);
  const int rank = global.mpi->world_rank();
  if (rank != 0) {
    try {
      const parallel::DraftWorkerStats s = parallel::serve_worker_rank(*global.mpi, layout, models);
      if (layout.role(rank) == parallel::RankRole::kDraft) {
        spdlog::info("draft rank {}: {} proposals, busy {:.2f} of {:.1f} s, CPU {:.2f} s", rank, s.proposals,
                     s.wall_s > 0 ? s.busy_s / s.wall_s : 0.0, s.wall_s, s.cpu_s);
      }
    } catch (const Error& e) {
      spdlog::error("rank {}: {}: {}", rank, error_kind_name(e.kind()), e.what());
      parallel::MpiSession::abort_job(1);
    }
    return;
  }
  spdlog::info("mpirun: {}", layout.summary());
  std::vector<int> lost;
  {
    parallel::Coordinator coordinator(*global.mpi, layout, std::chrono::milliseconds(global.rank_timeout_ms));
    try {
      work([&](const spec::EngineOptions& o) { return coordinator.make_engine(o); });
    } catch (const Error& e) {
      if (!coordinator.target_lost()) throw;
      // No target is left, and a hung group rank would keep mpirun waiting.
      spdlog::error("the target group (ranks 1..{}) was lost: {}; results written so far are kept; ending the job",
                    layout.tp, e.what());
      parallel::MpiSession::abort_job(kLostRanksExit);
    }
    lost = coordinator.lost_ranks();
    const parallel::MessageCounts c = coordinator.counts();
    spdlog::info("rank 0 exchanged {} messages ({} bytes) with the worker ranks", c.sent + c.received,
                 c.sent_bytes + c.received_bytes);
  }
  if (lost.empty()) return;
  spdlog::error("draft rank(s) {} lost during the run (died or stopped answering within --rank-timeout {} ms); "
                "their sequences moved to other drafters and every result was written; ending the job",
                fmt::join(lost, ", "), global.rank_timeout_ms);
  parallel::MpiSession::abort_job(kLostRanksExit);
}

}  // namespace seed::launch
