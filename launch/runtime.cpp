#include "launch/runtime.h"

#include <dlfcn.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <torch/cuda.h>
#include <torch/torch.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <set>
#include <string>
#include <thread>

#include "launch/cpu_features.h"
#include "parallel/mpi_session.h"
#include "parallel/rank_layout.h"

namespace seed::launch {

namespace {

// The OpenBLAS core type to ask for, or nullptr when OpenBLAS's own choice
// is fine (or it is not OpenBLAS).
const char* better_blas_core() {
  using CoreName = char* (*)();
  auto core_name = reinterpret_cast<CoreName>(dlsym(RTLD_DEFAULT, "openblas_get_corename"));
  if (core_name == nullptr) return nullptr;
  static const std::set<std::string> kGenericCores = {"Prescott", "Core2", "Penryn", "Dunnington",
                                                      "Nehalem", "Atom", "Unknown"};
  if (kGenericCores.count(core_name()) == 0) return nullptr;
  if (cpu_has_avx512()) return "SkylakeX";
  return __builtin_cpu_supports("avx2") ? "Haswell" : nullptr;
}

// hugetlb=1: malloc asks for transparent huge pages (madvise); the mmap and
// trim thresholds keep freed buffers up to 32 MiB (glibc's maximum) in the
// heap instead of returning them to the kernel.
constexpr const char* kMallocTunables =
    "glibc.malloc.hugetlb=1:glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=1073741824";

// Spins (about a millisecond) an idle OpenMP thread waits before it sleeps:
// long enough to stay awake between the ops of one forward (a sleeping team
// made 2-thread decode 2.1x slower), short enough to give the core away
// while the target waits for drafts.
constexpr const char* kSpinCount = "100000";

// Set when set_startup_environment() could not re-execute the process.
bool startup_exec_failed = false;

// Runs from the executable's .preinit_array, before any shared library's
// initialisers: re-executing here costs the loading alone, where from main()
// it also cost libtorch's initialisers (about a second, for every command).
// libc has not set `environ` yet either; it is set from envp, as libc will.
void set_startup_environment(int, char** argv, char** envp) {
  environ = envp;
  bool changed = false;
  if (std::getenv("GLIBC_TUNABLES") == nullptr) changed |= setenv("GLIBC_TUNABLES", kMallocTunables, 1) == 0;
  if (std::getenv("OMP_WAIT_POLICY") == nullptr && std::getenv("GOMP_SPINCOUNT") == nullptr) {
    changed |= setenv("GOMP_SPINCOUNT", kSpinCount, 1) == 0;
  }
  if (changed) {
    execv("/proc/self/exe", argv);
    startup_exec_failed = true;
  }
}
__attribute__((section(".preinit_array"), used)) void (*startup_environment)(int, char**, char**) =
    set_startup_environment;

}  // namespace

void ensure_fast_runtime(char** argv) {
  // OpenBLAS's choice of kernels is known only once it has initialised.
  const char* core = std::getenv("OPENBLAS_CORETYPE") == nullptr ? better_blas_core() : nullptr;
  if (core != nullptr && setenv("OPENBLAS_CORETYPE", core, 1) == 0) {
    execv("/proc/self/exe", argv);
    startup_exec_failed = true;
  }
  if (startup_exec_failed) {
    spdlog::warn("could not re-execute with {}GLIBC_TUNABLES={} GOMP_SPINCOUNT={}: set them yourself for speed",
                 core != nullptr ? fmt::format("OPENBLAS_CORETYPE={} ", core) : "", kMallocTunables, kSpinCount);
  }
}

std::string startup_settings() {
  std::string settings;
  for (const char* name : {"OPENBLAS_CORETYPE", "GLIBC_TUNABLES", "OMP_WAIT_POLICY", "GOMP_SPINCOUNT"}) {
    const char* value = std::getenv(name);
    if (value != nullptr) settings += fmt::format("{}{}={}", settings.empty() ? "" : " ", name, value);
  }
  return settings;
}

int launcher_rank() {
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK"}) {
    if (const char* rank = std::getenv(name)) return std::atoi(rank);
  }
  return 0;
}

void warn_if_blas_held_back() {
  static const std::set<std::string> kAvx512Cores = {"skylakex", "cooperlake", "sapphirerapids"};
  const char* core = std::getenv("OPENBLAS_CORETYPE");
  if (core == nullptr || !cpu_has_avx512() || launcher_rank() != 0) return;
  std::string name = core;
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
  if (kAvx512Cores.count(name)) return;
  spdlog::warn("OPENBLAS_CORETYPE={} holds this AVX-512 CPU to narrower kernels: OpenBLAS products (training, "
               "prefill) run up to 1.5x slower; unset it to let OpenBLAS choose",
               core);
}

void init_threads(GlobalOptions& global) {
  const char* local_size = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
  global.host_processes = local_size ? std::max(1, std::atoi(local_size)) : 1;
  global.cores = usable_cores(global.host_processes);
  torch::set_num_threads(global.threads > 0 ? global.threads : global.cores);
}

void use_global_model_options(const GlobalOptions& global, spec::EngineOptions& engine) {
  if (global.mpi) {
    engine.device = parallel::rank_device(engine.device, global.mpi->node_rank(),
                                          static_cast<int>(torch::cuda::device_count()));
  }
  engine.weights_dtype = global.weights_dtype;
  engine.cuda_graphs = global.cuda_graphs;
  engine.cpu_kernel = global.cpu_kernel;
  engine.loaded_models = global.loaded_models;
  engine.host_processes = global.host_processes;
}

ThreadPlan plan_engine_threads(const GlobalOptions& global, spec::EngineOptions& engine, int max_useful_drafters,
                               bool quiet) {
  ThreadRequest request;
  request.cores = global.cores;
  request.threads = global.threads;
  request.drafters = engine.drafters;
  // Under mpirun with several ranks the drafters live on draft ranks.
  const bool one_process = global.mpi == nullptr || global.mpi->world_size() == 1;
  request.drafter_threads = one_process && engine.engine.drafter_pool();
  request.max_useful_drafters = max_useful_drafters;
  const ThreadPlan plan = plan_threads(request);
  torch::set_num_threads(plan.target_threads);
  if (request.drafter_threads) {
    engine.drafters = plan.drafters;
    engine.draft_threads = plan.draft_threads;
  }
  use_global_model_options(global, engine);
  if (!quiet) spdlog::info("threads: {}", plan.describe());
  if (!plan.oversubscribed.empty()) {
    static bool warned = false;  // once per process, not per engine
    if (!warned) spdlog::warn("the thread flags oversubscribe this machine: {}", plan.oversubscribed);
    warned = true;
  }
  return plan;
}

models::LoadOptions model_load_options(const GlobalOptions& global, const std::string& device) {
  models::LoadOptions options;
  options.device = device;
  options.weights_dtype = global.weights_dtype;
  options.cpu_kernel = global.cpu_kernel;
  options.cuda_graphs = global.cuda_graphs;
  return options;
}

}  // namespace seed::launch
