#include "models/device_memory.h"

#include <unistd.h>

namespace seed::models {

int64_t free_memory_bytes(const c10::Device& device) {
  if (device.is_cuda()) return cuda_free_memory_bytes(device.has_index() ? device.index() : 0);
  return int64_t{sysconf(_SC_AVPHYS_PAGES)} * sysconf(_SC_PAGESIZE);
}

}  // namespace seed::models
