// The peak resident set of this process so far, as getrusage reports it:
// the memory figure every benchmark prints.
#pragma once

#include <sys/resource.h>

#include <cstdint>

namespace seed::bench {

inline int64_t peak_resident_bytes() {
  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<int64_t>(usage.ru_maxrss) * 1024;  // Linux reports kilobytes
}

}  // namespace seed::bench
