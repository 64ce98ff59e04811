// Process-wide runtime set-up done once by main, before any model exists:
// thread counts and the BLAS kernel choice. The library never does this.
#pragma once

namespace seed::launch {

// OpenBLAS picks its kernels by CPUID and falls back to generic SSE3
// ("Prescott") on CPUs it does not recognise, which virtual machines often
// report; that makes small GEMMs 5-7x slower (docs/benchmarks.md). OpenBLAS
// reads OPENBLAS_CORETYPE only when it loads, so if it chose a generic core
// on a CPU with AVX2/AVX-512, re-executes this process with the right core
// type. Returns normally if nothing needs fixing (or a user set it).
void ensure_fast_blas(char** argv);

// Intra-op threads for libtorch/OpenMP/BLAS; 0 = all hardware threads.
void set_threads(int threads);

}  // namespace seed::launch
