#include "launch/runtime.h"

#include <dlfcn.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <torch/torch.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <set>
#include <string>
#include <thread>

#include "launch/cpu_features.h"

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

}  // namespace

void ensure_fast_runtime(char** argv) {
  bool changed = false;
  const char* core = std::getenv("OPENBLAS_CORETYPE") == nullptr ? better_blas_core() : nullptr;
  if (core != nullptr) changed |= setenv("OPENBLAS_CORETYPE", core, 1) == 0;
  if (std::getenv("GLIBC_TUNABLES") == nullptr) changed |= setenv("GLIBC_TUNABLES", kMallocTunables, 1) == 0;
  if (changed) {
    execv("/proc/self/exe", argv);
    spdlog::warn("could not re-execute with {}{}: set them yourself for speed",
                 core != nullptr ? fmt::format("OPENBLAS_CORETYPE={} ", core) : "", kMallocTunables);
  }
}

void warn_if_blas_held_back() {
  static const std::set<std::string> kAvx512Cores = {"skylakex", "cooperlake", "sapphirerapids"};
  const char* core = std::getenv("OPENBLAS_CORETYPE");
  const char* rank = std::getenv("OMPI_COMM_WORLD_RANK");
  if (core == nullptr || !cpu_has_avx512() || (rank != nullptr && std::string(rank) != "0")) return;
  std::string name = core;
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
  if (kAvx512Cores.count(name)) return;
  spdlog::warn("OPENBLAS_CORETYPE={} holds this AVX-512 CPU to narrower kernels: OpenBLAS products (training, "
               "prefill) run up to 1.5x slower; unset it to let OpenBLAS choose",
               core);
}

void set_threads(int threads) {
  const int n = threads > 0 ? threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  torch::set_num_threads(n);
}

}  // namespace seed::launch
