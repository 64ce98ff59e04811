#include "launch/runtime.h"

#include <dlfcn.h>
#include <spdlog/spdlog.h>
#include <torch/torch.h>
#include <unistd.h>

#include <cstdlib>
#include <set>
#include <string>
#include <thread>

namespace seed::launch {

void ensure_fast_blas(char** argv) {
  if (std::getenv("OPENBLAS_CORETYPE") != nullptr) return;  // the user's choice stands
  using CoreName = char* (*)();
  auto core_name = reinterpret_cast<CoreName>(dlsym(RTLD_DEFAULT, "openblas_get_corename"));
  if (core_name == nullptr) return;  // not OpenBLAS
  static const std::set<std::string> kGenericCores = {"Prescott", "Core2", "Penryn", "Dunnington",
                                                      "Nehalem", "Atom", "Unknown"};
  if (kGenericCores.count(core_name()) == 0) return;
  __builtin_cpu_init();
  const char* better = __builtin_cpu_supports("avx512f") ? "SkylakeX"
                       : __builtin_cpu_supports("avx2") ? "Haswell"
                                                        : nullptr;
  if (better == nullptr) return;
  setenv("OPENBLAS_CORETYPE", better, 1);
  execv("/proc/self/exe", argv);
  spdlog::warn("OpenBLAS chose generic '{}' kernels on a CPU with {}; set OPENBLAS_CORETYPE={} for speed",
               core_name(), better, better);
}

void set_threads(int threads) {
  const int n = threads > 0 ? threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  torch::set_num_threads(n);
}

}  // namespace seed::launch
