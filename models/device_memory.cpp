#include "models/device_memory.h"

#include <unistd.h>

#include <fstream>
#include <string>

namespace seed::models {

int64_t available_memory_bytes(const c10::Device& device) {
  if (device.is_cuda()) return cuda_free_memory_bytes(device.has_index() ? device.index() : 0);
  std::ifstream meminfo("/proc/meminfo");
  constexpr char kKey[] = "MemAvailable:";  // "MemAvailable:   23876300 kB"
  for (std::string line; std::getline(meminfo, line);) {
    if (line.rfind(kKey, 0) == 0) return std::stoll(line.substr(sizeof(kKey) - 1)) * 1024;
  }
  return int64_t{sysconf(_SC_AVPHYS_PAGES)} * sysconf(_SC_PAGESIZE);  // a kernel without MemAvailable
}

}  // namespace seed::models
