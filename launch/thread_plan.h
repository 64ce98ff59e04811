// How one process splits the cores it may use between the target model and
// the drafters, so that no more threads are busy than there are cores.
//
// On a small machine the split decides the speed: the SEED engines verify on
// the main thread while drafter threads draft, and libtorch's intra-op pool
// adds threads to both. Two cores running a 2-thread target plus three
// drafters ran `seed` at 0.42x ar; one thread each ran it at 2-2.7x.
// plan_threads is a pure function (tested table-driven); the launcher gives
// it the cores (process affinity, divided among the ranks on this node under
// mpirun) and the user's flags, applies the plan and prints describe().
#pragma once

#include <string>

namespace seed::launch {

// What this process runs, and what the user asked for (0 = automatic).
struct ThreadRequest {
  int cores = 1;             // cores this process may use, >= 1
  int threads = 0;           // --threads: the target's intra-op threads
  int drafters = 0;          // --drafters: drafter threads (SEED engines)
  bool drafter_threads = false;  // the engine drafts on threads of its own
  int max_useful_drafters = 0;   // more drafters than sequences idle (0 = no limit)
};

struct ThreadPlan {
  int cores = 1;
  int target_threads = 1;  // intra-op threads of the thread that verifies
  int drafters = 0;        // drafter threads; 0 when the engine drafts inline
  int draft_threads = 1;   // intra-op threads of each drafter
  // Set when the user's flags run more busy threads than cores: what the
  // automatic plan would have chosen instead.
  std::string oversubscribed;

  int busy_threads() const { return target_threads + drafters * draft_threads; }
  // One line: "2 cores: target 1 thread, 1 drafter x 1 thread".
  std::string describe() const;
};

ThreadPlan plan_threads(const ThreadRequest& request);

// Cores this process may use: OMP_NUM_THREADS when it is set, as every
// OpenMP program reads it (schedulers and launchers set it per task or
// rank); else its CPU affinity, shared among `local_ranks` ranks on this
// node unless the launcher bound the process to fewer cores than the
// machine has (then the binding already did the sharing).
int usable_cores(int local_ranks);

// The thread count an OMP_NUM_THREADS value names: a positive number, or
// the first of a nested list ("4,2"), as libgomp reads it; 0 for no value
// or one libgomp rejects (it warns about those itself).
int omp_num_threads(const char* value);

}  // namespace seed::launch
