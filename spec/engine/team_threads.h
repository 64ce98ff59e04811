// TeamThreads: this thread's OpenMP team at `threads` while in scope: wider
// for work that runs while the threads owning those cores wait (a forward
// while the drafter threads are idle, a draft while the target is), one
// thread where other processes hold the cores (TeamWidthPolicy). The
// thread's own setting: at::set_num_threads would rebuild ATen's pools.
#pragma once

#include <ATen/Parallel.h>
#include <omp.h>

namespace seed::spec {

// Lets ATen set up this thread, so that a team size the thread sets after
// it stays. ATen gives a thread the process's team at its first parallel
// op, once, through a thread-local flag in an inline function: seed's copy
// of it, and in torch 2 libtorch's own, which at::get_num_threads() sets.
inline void init_aten_thread() {
  at::internal::lazy_init_num_threads();
  at::get_num_threads();
}

class TeamThreads {
 public:
  explicit TeamThreads(int threads) : before_(omp_get_max_threads()), threads_(threads) {
    if (threads_ != before_) omp_set_num_threads(threads_);
  }
  ~TeamThreads() {
    if (threads_ != before_) omp_set_num_threads(before_);
  }
  TeamThreads(const TeamThreads&) = delete;
  TeamThreads& operator=(const TeamThreads&) = delete;

 private:
  int before_, threads_;
};

}  // namespace seed::spec
