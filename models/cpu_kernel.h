// Which CPU matrix kernel multiplies the weights, and in which dtype the
// weights sit in memory. Torch-free: the launcher parses both from flags.
//
// Decode and speculative verification multiply 1-16 rows by every weight
// matrix, so their speed is the speed of streaming the weights: half-size
// (bfloat16, float16) weights halve the bytes read, and the kernel widens
// them to float32 in registers (the products and sums stay float32), or
// multiplies bfloat16 as it is on AMX tiles or with vdpbf16ps.
#pragma once

#include <string>

namespace seed::models {

enum class CpuKernel {
  kAmx,         // AVX-512, with bfloat16 weights multiplied on AMX tiles (16 rows x 64 columns)
  kAvx512Bf16,  // AVX-512, with bfloat16 weights multiplied by bfloat16 rows (vdpbf16ps, AVX512_BF16)
  kAvx512,      // AVX-512F: up to 16 rows a pass over the weights, float32 FMAs
  kAvx2,        // AVX2 + FMA + F16C: 3 rows x 32 columns per tile
  kPortable,    // plain C++, whatever the compiler vectorises
};

// The fastest kernel this CPU runs: AMX where Linux grants its tiles; on
// other AVX-512 CPUs, vdpbf16ps where it does more multiply-adds a second
// than float32 FMAs (AMD's cores), else float32 FMAs. Decided by the CPU,
// not timed, so that a machine computes the same bits in every run.
CpuKernel best_cpu_kernel();
bool cpu_kernel_supported(CpuKernel kernel);
const char* cpu_kernel_name(CpuKernel kernel);  // "amx" | "avx512-bf16" | "avx512" | "avx2" | "portable"
// Throws kInvalidArgument naming `what` (a flag) for an unknown name or a
// kernel this CPU cannot run.
CpuKernel parse_cpu_kernel(const std::string& name, const std::string& what);

enum class WeightDtype { kFloat32, kBFloat16, kFloat16 };

const char* weight_dtype_name(WeightDtype dtype);  // "float32" | "bfloat16" | "float16"
// Throws kInvalidArgument naming `what` for an unknown name.
WeightDtype parse_weight_dtype(const std::string& name, const std::string& what);

}  // namespace seed::models
