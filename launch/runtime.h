// Process-wide runtime set-up done once by main, before any model exists:
// thread counts, the BLAS kernel choice and the allocator's settings. The
// library never does this.
#pragma once

#include <string>

#include "launch/commands.h"
#include "launch/thread_plan.h"
#include "models/causal_lm.h"
#include "spec/engine/engine_factory.h"

namespace seed::launch {

// Three settings that are read only when the process starts, so when one is
// missing the process re-executes itself with it (a variable the user set
// stands): the last two before any library initialises (runtime.cpp), and
// OPENBLAS_CORETYPE here, once OpenBLAS has made its choice:
// - OPENBLAS_CORETYPE: OpenBLAS picks its kernels by CPUID and falls back to
//   generic SSE3 ("Prescott") on CPUs it does not recognise, which virtual
//   machines often report; small GEMMs then run 5-7x slower. Set when OpenBLAS
//   chose a generic core on a CPU with AVX2/AVX-512.
// - GLIBC_TUNABLES: glibc hands every freed buffer above the mmap threshold
//   back to the kernel, so each training step (activations of tens of MB)
//   faults its memory in again 4 KiB at a time; a third of the CPU went to
//   page faults. Transparent huge pages for malloc'd memory and a high trim
//   threshold made `seed train` 1.8x faster (docs/performance.md).
// - GOMP_SPINCOUNT: libgomp's idle threads spin after every parallel region
//   before they sleep; a bounded spin keeps a forward's team awake between
//   its ops and then frees the core (set unless OMP_WAIT_POLICY or
//   GOMP_SPINCOUNT is).
// Returns normally when nothing needs fixing (or, with a warning, when the
// process could not re-execute itself).
void ensure_fast_runtime(char** argv);

// Those settings (and OMP_WAIT_POLICY) as this process runs with them,
// "NAME=value" each, unset ones left out: for benchmark reports.
std::string startup_settings();

// The world rank mpirun gave this process (0 without mpirun), known before
// MPI starts.
int launcher_rank();

// A user's OPENBLAS_CORETYPE that holds an AVX-512 CPU to narrower kernels
// (Haswell's AVX2 ones trained the zoo target 1.5x slower) is kept, but
// deserves a warning: logged here, once per job (rank 0 under mpirun). Call
// after the log level is set.
void warn_if_blas_held_back();

// Fills global.cores (launch/thread_plan.h) and sets libtorch's intra-op
// threads to --threads, or to every usable core: the plan of a process that
// runs one model at a time. Call once the flags are parsed.
void init_threads(GlobalOptions& global);

// The process's model options in `engine`: how models load (--weights-dtype,
// --cpu-kernel, --eager), the models loaded so far (loaded_models), and
// under mpirun the rank's own GPU for a --device cuda without an index
// (parallel::rank_device).
void use_global_model_options(const GlobalOptions& global, spec::EngineOptions& engine);

// The thread plan of `engine` in this process under the user's flags
// (--threads, engine.drafters; 0 = automatic): sets libtorch's threads to
// the target's and, for engines that draft on threads of their own, the
// engine's drafters; and the process's model options
// (use_global_model_options). Logs the plan in one line unless `quiet`,
// and warns when the flags oversubscribe the cores. More drafters than
// `max_useful_drafters` sequences would idle (0 = no limit).
ThreadPlan plan_engine_threads(const GlobalOptions& global, spec::EngineOptions& engine, int max_useful_drafters,
                               bool quiet = false);

// How commands load a model on `device` under the global flags.
models::LoadOptions model_load_options(const GlobalOptions& global, const std::string& device);

}  // namespace seed::launch
