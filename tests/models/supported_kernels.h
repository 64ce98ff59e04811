// The CPU kernels this machine runs, for tests that check every one of them.
#pragma once

#include <vector>

#include "models/cpu_kernel.h"

namespace seed::models::testing {

inline std::vector<CpuKernel> supported_kernels() {
  std::vector<CpuKernel> kernels;
  for (CpuKernel k : {CpuKernel::kAmx, CpuKernel::kAvx512Bf16, CpuKernel::kAvx512, CpuKernel::kAvx2,
                       CpuKernel::kPortable}) {
    if (cpu_kernel_supported(k)) kernels.push_back(k);
  }
  return kernels;
}

}  // namespace seed::models::testing
