#include "launch/distributed.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdlib>
#include <string>
#include <string_view>

#include "launch/model_option.h"
#include "launch/runtime.h"
#include "models/base/error.h"
#include "parallel/distributed_engine.h"

namespace seed::launch {

bool launched_by_mpirun() { return std::getenv("OMPI_COMM_WORLD_SIZE") || std::getenv("PMIX_RANK"); }

namespace {

// The model folders the engines of `models` load: --target, and --draft
// where the engine drafts with a draft model.
void check_model_folders(const spec::EngineOptions& models) {
  check_model_folder(models.target, "--target");
  if (models.engine.drafts() && models.drafter.needs_draft_model()) check_model_folder(models.draft, "--draft");
  spec::check_draft_vocabulary(models);
}

// --rank-timeout's value in argv (`--rank-timeout N` or `--rank-timeout=N`,
// the last one given), else its default.
int rank_timeout_ms_in(int argc, char** argv) {
  int ms = GlobalOptions{}.rank_timeout_ms;
  constexpr std::string_view kOption = "--rank-timeout", kOptionIs = "--rank-timeout=";
  for (int i = 1; i < argc; ++i) {
    std::string_view value = argv[i];
    if (value == kOption && i + 1 < argc) {
      value = argv[++i];
    } else if (value.substr(0, kOptionIs.size()) == kOptionIs) {
      value.remove_prefix(kOptionIs.size());
    } else {
      continue;
    }
    int parsed = 0;
    const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), parsed);
    if (error == std::errc() && end == value.data() + value.size() && parsed > 0) ms = parsed;
  }
  return ms;
}

}  // namespace

std::unique_ptr<parallel::MpiSession> start_mpi(int* argc, char*** argv) {
  const int timeout_ms = rank_timeout_ms_in(*argc, *argv), rank = launcher_rank();
  const auto limit = std::chrono::milliseconds(int64_t{parallel::kLoadTimeoutFactor} * timeout_ms);
  // The other ranks wait a little longer, so that rank 0 (unless it is the
  // one stopped) reports and ends the job for all of them.
  const auto grace = rank == 0 ? std::chrono::milliseconds(0) : std::max(limit / 10, std::chrono::milliseconds(1000));
  return std::make_unique<parallel::MpiSession>(argc, argv, limit + grace, [rank, limit, timeout_ms] {
    const char* size = std::getenv("OMPI_COMM_WORLD_SIZE");
    spdlog::error("rank {}: the job's {} ranks did not all start within {:.1f} s ({} x --rank-timeout {} ms): a rank "
                  "stopped, hung or was slow to start (MPI_Init); ending the job",
                  rank, size ? size : "?", limit.count() / 1000.0, parallel::kLoadTimeoutFactor, timeout_ms);
    spdlog::default_logger()->flush();
    std::_Exit(kLostRanksExit);
  });
}

void add_distributed_options(CLI::App& app, GlobalOptions& global) {
  app.add_option("--tp", global.tp,
                 "Under mpirun: target group size on ranks 1..T (0: the target stays on rank 0, every other rank "
                 "drafts)")
      ->check(non_negative_integer())
      ->capture_default_str();
  app.add_option("--rank-timeout", global.rank_timeout_ms,
                 "Under mpirun: milliseconds rank 0 waits for a worker rank's answer before it counts the rank "
                 "lost: a lost draft rank's sequences move elsewhere, a lost target group ends the run. A verify "
                 "that prefills a prompt (a sequence's first) may take 10 times as long, and so may the ranks' start")
      ->check(positive_integer())
      ->capture_default_str();
  app.add_option_function<std::string>(
         "--draft-tables", [&global](const std::string& value) { global.share_draft_tables = value == "shared"; },
         "Under mpirun, with --drafter stand or aded: shared (each verdict also teaches the other draft ranks' "
         "table of the request's group) or per-rank (a rank's tables learn only from the requests it drafts for)")
      ->check(CLI::IsMember({"shared", "per-rank"}))
      ->default_str("shared");
  app.fallthrough();  // `seed run ... --tp 2`, as well as `seed --tp 2 run ...`
}

void run_with_engines(const GlobalOptions& global, const spec::EngineOptions& models,
                      const std::function<void(const EngineMaker&)>& work) {
  run_with_engines(global, models, [&](const EngineMaker& make_engine, parallel::Coordinator*) { work(make_engine); });
}

void run_with_engines(const GlobalOptions& global, const spec::EngineOptions& models, const RankWork& work) {
  check_model_folders(models);  // on every rank, before any waits for another
  if (!global.mpi || global.mpi->world_size() == 1) {
    if (global.tp > 0) {
      spdlog::warn("--tp {}: this process is not one of an mpirun job's ranks, so it holds the whole target "
                   "(launch/mpirun.sh -n {} -- seed --tp {} ... splits it)",
                   global.tp, global.tp + 1, global.tp);
    }
    work([](const spec::EngineOptions& o) { return spec::make_engine(o); }, nullptr);
    return;
  }
  const parallel::RankLayout layout = parallel::RankLayout::make(global.mpi->world_size(), global.tp);
  const int rank = global.mpi->world_rank();
  if (rank != 0) {
    try {
      spec::EngineOptions worker = models;
      use_global_model_options(global, worker);
      const parallel::WorkerStats s = parallel::serve_worker_rank(*global.mpi, layout, worker);
      const parallel::RankUsage& u = s.usage;
      const bool drafts = layout.role(rank) == parallel::RankRole::kDraft;
      spdlog::info("{} rank {} on {}: {} {}{}, busy {:.2f} of {:.1f} s, CPU {:.2f} s",
                   parallel::rank_role_name(layout.role(rank)), rank, worker.device, s.requests,
                   drafts ? "proposals" : "verifies",
                   drafts ? fmt::format(" in {} batches", s.batches) : "", u.wall_s > 0 ? u.busy_s / u.wall_s : 0.0,
                   u.wall_s, u.cpu_s);
    } catch (const Error& e) {
      spdlog::error("rank {}: {}: {}", rank, error_kind_name(e.kind()), e.what());
      parallel::MpiSession::abort_job(1);
    }
    return;
  }
  spdlog::info("mpirun: {}", layout.summary());
  std::vector<int> lost;
  {
    parallel::Coordinator coordinator(
        *global.mpi, layout, std::chrono::milliseconds(global.rank_timeout_ms),
        global.share_draft_tables ? parallel::DraftTables::kShared : parallel::DraftTables::kPerRank);
    coordinator.wait_for_workers();
    if (coordinator.target_lost()) {
      spdlog::error("the target group (ranks 1..{}) did not start serving within {} x --rank-timeout {} ms: leader "
                    "rank {} died, hung or was still loading its model (raise --rank-timeout for a model that loads "
                    "slowly); ending the job",
                    layout.tp, parallel::kLoadTimeoutFactor, global.rank_timeout_ms, parallel::kTargetLeaderRank);
      parallel::MpiSession::abort_job(kLostRanksExit);
    }
    try {
      work([&](const spec::EngineOptions& o) { return coordinator.make_engine(o); }, &coordinator);
    } catch (const Error& e) {
      if (!coordinator.target_lost()) throw;
      // No target is left, and a hung group rank would keep mpirun waiting.
      spdlog::error("the target group (ranks 1..{}) was lost: {}; results written so far are kept (seed run: "
                    "finish with --resume); ending the job",
                    layout.tp, e.what());
      parallel::MpiSession::abort_job(kLostRanksExit);
    }
    const parallel::MessageCounts c = coordinator.counts();
    spdlog::info("rank 0 exchanged {} messages ({} bytes) with the worker ranks", c.sent + c.received,
                 c.sent_bytes + c.received_bytes);
    coordinator.shut_down();
    if (coordinator.target_lost()) {
      spdlog::error("the target group (ranks 1..{}) was lost after the last result: leader rank {} died or stopped "
                    "answering within --rank-timeout {} ms; every result was written; ending the job",
                    layout.tp, parallel::kTargetLeaderRank, global.rank_timeout_ms);
      parallel::MpiSession::abort_job(kLostRanksExit);
    }
    lost = coordinator.lost_ranks();
  }
  global.mpi->limit_finalize(std::chrono::milliseconds(global.rank_timeout_ms), [timeout_ms = global.rank_timeout_ms] {
    spdlog::error("the worker ranks did not all reach the end of the job within --rank-timeout {} ms of their "
                  "last answer (one stopped or hung on its way out); every result was written; ending the job",
                  timeout_ms);
    parallel::MpiSession::abort_job(kLostRanksExit);
  });
  if (lost.empty()) return;
  spdlog::error("draft rank(s) {} lost during the run (died or stopped answering within --rank-timeout {} ms); "
                "their sequences moved to other drafters and every result was written; ending the job",
                fmt::join(lost, ", "), global.rank_timeout_ms);
  parallel::MpiSession::abort_job(kLostRanksExit);
}

}  // namespace seed::launch
