// How a command gets its engines on one rank or many (README.md, "Running
// under mpirun"). Under mpirun with P > 1 ranks, rank 0 prints the rank
// layout and runs the command with engines whose SEED drafters live on the
// draft ranks and, with --tp, whose target lives on ranks 1..T; every other
// rank serves drafts or its target shard until rank 0 is done and
// never runs the command itself. Without mpirun (or with -np 1) the command
// runs as usual with spec::make_engine, every role in one process, with the
// same outputs.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <memory>

#include "launch/commands.h"
#include "parallel/distributed_engine.h"
#include "parallel/mpi_session.h"
#include "spec/api/engine.h"
#include "spec/engine/engine_factory.h"

namespace seed::launch {

using EngineMaker = std::function<std::unique_ptr<spec::Engine>(const spec::EngineOptions&)>;
// Rank 0's Coordinator under mpirun with P > 1 ranks, for per-rank figures
// (`seed bench`); null when every role runs in this process.
using RankWork = std::function<void(const EngineMaker&, parallel::Coordinator*)>;

// True when Open MPI's mpirun (or another PMIx launcher) started this process.
bool launched_by_mpirun();

// MPI started on this rank, every rank waiting for all to have started
// (parallel::MpiSession). A job whose ranks have not all started within
// kLoadTimeoutFactor x --rank-timeout ends with kLostRanksExit and a
// message, rank 0's first: a rank stopped or hung while the job starts
// would otherwise keep every rank waiting. MPI starts before the command
// line is parsed, so --rank-timeout is read from argv here (a malformed
// value counts as the default, and the parser then reports it).
std::unique_ptr<parallel::MpiSession> start_mpi(int* argc, char*** argv);

// --tp and --rank-timeout on the app, accepted after any subcommand too.
void add_distributed_options(CLI::App& app, GlobalOptions& global);

// Rank 0 (or the only process): waits for the worker ranks to serve
// (Coordinator::wait_for_workers; a target group that does not ends the
// job with kLostRanksExit), runs `work` with an engine maker, then
// shuts the worker ranks down; if draft ranks were lost on the way, or the
// target group after the last result, it logs them and ends the job with
// exit status kLostRanksExit (a hung rank would keep mpirun waiting),
// after `work` has written its results. If the target group (--tp) is
// lost during `work`, `work` ends with that error (what it wrote so far is
// kept), which is logged, and the job ends with kLostRanksExit. A rank
// that hangs after its shutdown answer ends the job the same way, from
// MPI_Finalize, after --rank-timeout. Other ranks: serve with
// `models`' draft model or their shard of the target until rank 0 is
// done; a fatal error there is logged and aborts the job. Throws
// kInvalidArgument for a layout that does not fit -np, and first, on every
// rank, kNotFound naming --target or --draft for a model folder of
// `models` (the draft where its engine drafts with one) that is missing.
void run_with_engines(const GlobalOptions& global, const spec::EngineOptions& models,
                      const std::function<void(const EngineMaker&)>& work);
// As above, and `work` also gets the Coordinator (null single-process).
void run_with_engines(const GlobalOptions& global, const spec::EngineOptions& models, const RankWork& work);

constexpr int kLostRanksExit = 3;

}  // namespace seed::launch
