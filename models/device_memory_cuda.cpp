// cuda_free_memory_bytes for a libtorch with CUDA.
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#include <cuda_runtime_api.h>

#include "models/device_memory.h"

namespace seed::models {

int64_t cuda_free_memory_bytes(c10::DeviceIndex index) {
  const c10::cuda::CUDAGuard on_device(index);
  size_t free = 0, total = 0;
  C10_CUDA_CHECK(cudaMemGetInfo(&free, &total));
  return static_cast<int64_t>(free);
}

}  // namespace seed::models
