// seed: scheduled speculative decoding for tree-search reasoning with LLMs.
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <exception>
#include <map>
#include <memory>

#include "launch/commands.h"
#include "launch/tokenize_commands.h"
#include "launch/distributed.h"
#include "launch/process_signals.h"
#include "launch/runtime.h"
#include "models/base/error.h"
#include "models/loaded_models.h"
#include "parallel/mpi_session.h"

int main(int argc, char** argv) {
  seed::launch::ensure_fast_runtime(argv);
  seed::launch::fail_writes_beyond_file_size_limit();
  spdlog::set_default_logger(spdlog::stderr_color_mt("seed"));
  spdlog::set_pattern("[%H:%M:%S.%e] [%^%l%$] %v");

  // Under mpirun every rank runs this main; the commands split the roles.
  // Made first, so that the session outlives what is made over its
  // communicators (a tensor-parallel model that loaded_models holds).
  std::unique_ptr<seed::parallel::MpiSession> mpi;
  if (seed::launch::launched_by_mpirun()) mpi = seed::launch::start_mpi(&argc, &argv);

  // Named, so that help and usage say `seed` however the binary was started.
  CLI::App app{"seed: fast, distributed tree-search reasoning with scheduled speculative decoding", "seed"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "seed 0.1.0");
  seed::launch::GlobalOptions global;
  global.loaded_models = std::make_shared<seed::models::LoadedModels>();
  global.mpi = mpi.get();
  if (const char* data_dir = std::getenv("SEED_DATA_DIR")) global.data_dir = data_dir;
  std::string log_level = "info";
  const std::map<std::string, spdlog::level::level_enum> levels = {
      {"trace", spdlog::level::trace}, {"debug", spdlog::level::debug}, {"info", spdlog::level::info},
      {"warn", spdlog::level::warn},   {"error", spdlog::level::err},   {"off", spdlog::level::off}};
  app.add_option("--log-level", log_level, "Logging verbosity")
      ->transform(CLI::IsMember(levels))
      ->capture_default_str();
  app.add_option("--threads", global.threads,
                 "The target's intra-op threads (0 = automatic: the usable cores, OMP_NUM_THREADS or the CPU affinity, "
                 "less one per drafter thread)")
      ->check(seed::launch::non_negative_integer())
      ->capture_default_str();
  std::string cpu_kernel = "auto", weights_dtype = "auto";
  bool eager = false;
  app.add_option("--cpu-kernel", cpu_kernel, "CPU matrix kernel: auto | amx | avx512-bf16 | avx512 | avx2 | portable")
      ->capture_default_str();
  app.add_option("--weights-dtype", weights_dtype,
                 "Weights in memory as float32 | bfloat16 | float16 (auto: as the model file stores them, but a float32 "
                 "draft of a bfloat16 or float16 target in the target's dtype); on a GPU also the activations and the "
                 "KV cache")
      ->capture_default_str();
  app.add_flag("--eager", eager,
               "GPU: run every forward eagerly, without CUDA graphs (for debugging; slower)");
  app.parse_complete_callback([&] {
    global.cuda_graphs = !eager;
    spdlog::set_level(levels.at(log_level));
    seed::launch::warn_if_blas_held_back();
    if (cpu_kernel != "auto") global.cpu_kernel = seed::models::parse_cpu_kernel(cpu_kernel, "--cpu-kernel");
    if (weights_dtype != "auto") {
      global.weights_dtype = seed::models::parse_weight_dtype(weights_dtype, "--weights-dtype");
    }
    seed::launch::init_threads(global);
  });
  seed::launch::add_distributed_options(app, global);
  seed::launch::add_generate_command(app, global);
  seed::launch::add_bench_command(app, global);
  seed::launch::add_train_command(app, global);
  seed::launch::add_corpus_command(app, global);
  seed::launch::add_convert_command(app, global);
  seed::launch::add_eval_command(app, global);
  seed::launch::add_run_command(app, global);
  seed::launch::add_tree_command(app);
  seed::launch::add_trigrams_command(app);
  seed::launch::add_sweep_command(app, global);
  seed::launch::add_report_command(app, global);
  seed::launch::add_tokenize_command(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const seed::Error& e) {
    spdlog::error("{}: {}", seed::error_kind_name(e.kind()), e.what());
    return 1;
  } catch (const std::exception& e) {
    spdlog::error("internal error: {}", e.what());
    return 2;
  }
  return 0;
}
