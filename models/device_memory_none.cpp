// cuda_free_memory_bytes for a libtorch without CUDA.
#include "models/base/error.h"
#include "models/device_memory.h"

namespace seed::models {

int64_t cuda_free_memory_bytes(c10::DeviceIndex index) {
  SEED_FAIL(kInvalidArgument) << "device cuda:" << static_cast<int>(index) << ": this build of seed has no CUDA";
}

}  // namespace seed::models
