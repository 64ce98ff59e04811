// The subcommands of `seed`. Each adds itself to the CLI11 app, owns its
// options, and runs from CLI11's callback; errors propagate as seed::Error
// to main, which prints them.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <optional>
#include <string>

#include "launch/option_checks.h"  // the checks the commands' options share
#include "models/cpu_kernel.h"

namespace seed {

namespace models {
class LoadedModels;
}
namespace parallel {
class MpiSession;
}

namespace launch {

struct GlobalOptions {
  int threads = 0;  // the target's intra-op threads; 0 = from the thread plan
  int cores = 1;    // cores this process may use (launch/thread_plan.h)
  // Processes of this job on this host (mpirun's local size; 1 alone),
  // which share its cores and memory.
  int host_processes = 1;
  // CPU: the matrices' dtype in memory (unset: as stored) and the kernel.
  std::optional<models::WeightDtype> weights_dtype;
  models::CpuKernel cpu_kernel = models::best_cpu_kernel();
  // GPU: forwards replay CUDA graphs (false: --eager).
  bool cuda_graphs = true;
  // Under mpirun (launch/distributed.h): the session main created, the
  // target group size (0: the target stays on rank 0), and how long rank 0
  // waits for a draft rank's answer before declaring it lost.
  parallel::MpiSession* mpi = nullptr;
  int tp = 0;
  int rank_timeout_ms = 30000;
  // Whether every draft rank's STAND/ADED table of a group learns from all
  // of the group's verdicts (parallel::DraftTables::kShared) or only from
  // its own slots' (--draft-tables per-rank).
  bool share_draft_tables = true;
  // $SEED_DATA_DIR: the folder of data sets a task's relative data.path is
  // looked up in when the task folder lacks the file (tasks/task_data_path.h).
  std::string data_dir;
  // The models this process's engines load and share: a run's target
  // engine and step verifier, `seed bench spec`'s engines side by side, the
  // points of `seed sweep` one after another (spec::EngineOptions::
  // loaded_models). Null: each engine loads its own.
  std::shared_ptr<models::LoadedModels> loaded_models;
  // How `seed run`'s interrupt message says to finish the run; empty: the
  // same options and --resume (`seed sweep` runs its points with its own).
  std::string resume_hint;
};

void add_generate_command(CLI::App& app, const GlobalOptions& global);
void add_bench_command(CLI::App& app, const GlobalOptions& global);
void add_train_command(CLI::App& app, const GlobalOptions& global);
void add_corpus_command(CLI::App& app, const GlobalOptions& global);
void add_convert_command(CLI::App& app, const GlobalOptions& global);
void add_eval_command(CLI::App& app, const GlobalOptions& global);
void add_run_command(CLI::App& app, const GlobalOptions& global);
void add_tree_command(CLI::App& app);
void add_trigrams_command(CLI::App& app);
void add_sweep_command(CLI::App& app, const GlobalOptions& global);
void add_report_command(CLI::App& app, const GlobalOptions& global);

}  // namespace launch
}  // namespace seed
