// Process-wide runtime set-up done once by main, before any model exists:
// thread counts, the BLAS kernel choice and the allocator's settings. The
// library never does this.
#pragma once

namespace seed::launch {

// Two settings that are read only when the process starts, so when either is
// missing this re-executes the process with it (a variable the user set
// stands):
// - OPENBLAS_CORETYPE: OpenBLAS picks its kernels by CPUID and falls back to
//   generic SSE3 ("Prescott") on CPUs it does not recognise, which virtual
//   machines often report; small GEMMs then run 5-7x slower. Set when OpenBLAS
//   chose a generic core on a CPU with AVX2/AVX-512.
// - GLIBC_TUNABLES: glibc hands every freed buffer above the mmap threshold
//   back to the kernel, so each training step (activations of tens of MB)
//   faults its memory in again 4 KiB at a time; a third of the CPU went to
//   page faults. Transparent huge pages for malloc'd memory and a high trim
//   threshold made `seed train` 1.8x faster (docs/benchmarks.md).
// Returns normally when nothing needs fixing.
void ensure_fast_runtime(char** argv);

// A user's OPENBLAS_CORETYPE that holds an AVX-512 CPU to narrower kernels
// (Haswell's AVX2 ones trained the zoo target 1.5x slower) is kept, but
// deserves a warning: logged here, once per job (rank 0 under mpirun). Call
// after the log level is set.
void warn_if_blas_held_back();

// Intra-op threads for libtorch/OpenMP/BLAS; 0 = all hardware threads.
void set_threads(int threads);

}  // namespace seed::launch
