#include "models/cpu_kernel.h"

#include <cpuid.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "models/base/error.h"

namespace seed::models {
namespace {

// clang's __builtin_cpu_supports does not know "f16c"; cpuid leaf 1 reports it.
bool cpu_has_f16c() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  return __get_cpuid(1, &eax, &ebx, &ecx, &edx) != 0 && (ecx & bit_F16C) != 0;
}

// AMX-BF16 in hardware (cpuid leaf 7: AMX-BF16 and AMX-TILE), and the
// kernel's leave to use the tiles' 8 KB of state: Linux grants it per
// process, on request (arch_prctl ARCH_REQ_XCOMP_PERM), before any thread
// touches a tile.
bool amx_usable() {
  static const bool usable = [] {
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    if (__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) == 0) return false;
    constexpr unsigned kAmxBf16 = 1u << 22, kAmxTile = 1u << 24;
    if ((edx & kAmxBf16) == 0 || (edx & kAmxTile) == 0) return false;
    constexpr long kRequestPermission = 0x1023, kTileData = 18;  // ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA
    return syscall(SYS_arch_prctl, kRequestPermission, kTileData) == 0;
  }();
  return usable;
}

// Whether vdpbf16ps (two products a lane) outruns float32 FMAs (one), and
// so verification and prefill, bound by multiply-adds once the weights sit
// in cache. On AMD's cores it does: a Zen 5 core multiplied 16 rows at 157 G
// multiply-adds a second, above what its FMAs can issue. On Intel's cores
// it does half the multiply-adds of the FMAs: a Xeon without AMX
// multiplied 16 rows by a 1B model's weights with FMAs in 0.6 of the time
// (docs/performance.md).
bool bf16_products_outrun_fmas() {
  __builtin_cpu_init();
  return __builtin_cpu_is("amd");
}

constexpr CpuKernel kAllKernels[] = {CpuKernel::kAmx, CpuKernel::kAvx512Bf16, CpuKernel::kAvx512, CpuKernel::kAvx2,
                                     CpuKernel::kPortable};

}  // namespace

bool cpu_kernel_supported(CpuKernel kernel) {
  __builtin_cpu_init();
  switch (kernel) {
    case CpuKernel::kAmx:
      return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bf16") && amx_usable();
    case CpuKernel::kAvx512Bf16:
      return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bf16");
    case CpuKernel::kAvx512:
      return __builtin_cpu_supports("avx512f");
    case CpuKernel::kAvx2:
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && cpu_has_f16c();
    case CpuKernel::kPortable:
      return true;
  }
  return false;
}

CpuKernel best_cpu_kernel() {
  for (CpuKernel kernel : kAllKernels) {
    if (kernel == CpuKernel::kAvx512Bf16 && !bf16_products_outrun_fmas()) continue;
    if (cpu_kernel_supported(kernel)) return kernel;
  }
  return CpuKernel::kPortable;
}

const char* cpu_kernel_name(CpuKernel kernel) {
  switch (kernel) {
    case CpuKernel::kAmx:
      return "amx";
    case CpuKernel::kAvx512Bf16:
      return "avx512-bf16";
    case CpuKernel::kAvx512:
      return "avx512";
    case CpuKernel::kAvx2:
      return "avx2";
    case CpuKernel::kPortable:
      return "portable";
  }
  return "?";
}

CpuKernel parse_cpu_kernel(const std::string& name, const std::string& what) {
  for (CpuKernel kernel : kAllKernels) {
    if (name != cpu_kernel_name(kernel)) continue;
    SEED_CHECK(cpu_kernel_supported(kernel), kInvalidArgument)
        << what << ": this CPU cannot run the " << name << " kernel; use " << cpu_kernel_name(best_cpu_kernel())
        << " or a narrower one";
    return kernel;
  }
  SEED_FAIL(kInvalidArgument) << what << ": unknown kernel '" << name << "'; use amx, avx512-bf16, avx512, avx2 or portable";
}

const char* weight_dtype_name(WeightDtype dtype) {
  switch (dtype) {
    case WeightDtype::kFloat32:
      return "float32";
    case WeightDtype::kBFloat16:
      return "bfloat16";
    case WeightDtype::kFloat16:
      return "float16";
  }
  return "?";
}

WeightDtype parse_weight_dtype(const std::string& name, const std::string& what) {
  for (WeightDtype dtype : {WeightDtype::kFloat32, WeightDtype::kBFloat16, WeightDtype::kFloat16}) {
    if (name == weight_dtype_name(dtype)) return dtype;
  }
  SEED_FAIL(kInvalidArgument) << what << ": unknown weight dtype '" << name << "'; use float32, bfloat16 or float16";
}

}  // namespace seed::models
