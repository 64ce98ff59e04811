// WiderTeam: this thread's OpenMP team, `extra` threads wider while in
// scope, for work that runs while the threads owning those cores wait (a
// forward while the drafter threads are idle, a draft while the target
// is). The thread's own setting: at::set_num_threads would rebuild ATen's
// pools.
#pragma once

#include <omp.h>

namespace seed::spec {

class WiderTeam {
 public:
  explicit WiderTeam(int extra) : threads_(omp_get_max_threads()), extra_(extra) {
    if (extra_ > 0) omp_set_num_threads(threads_ + extra_);
  }
  ~WiderTeam() {
    if (extra_ > 0) omp_set_num_threads(threads_);
  }
  WiderTeam(const WiderTeam&) = delete;
  WiderTeam& operator=(const WiderTeam&) = delete;

 private:
  int threads_, extra_;
};

}  // namespace seed::spec
