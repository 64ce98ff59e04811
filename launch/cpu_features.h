// What the CPU can run, as OpenBLAS's AVX-512 kernels need it. Header-only so
// that the tests of the `seed` binary expect exactly what `seed` checks.
#pragma once

namespace seed::launch {

inline bool cpu_has_avx512() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
}

}  // namespace seed::launch
