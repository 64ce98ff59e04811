// IdleBackoff: how long a thread waiting on MPI sleeps between tests.
//
// MPI has no completion callback, and Open MPI's blocking calls spin on the
// core (sched_yield at best), which an idle draft rank must not do: it
// would take the core from the ranks that compute. So waiters test (MPI_Test, MPI_Improbe)
// and sleep in between, for 1/64 of the time waited so far, clamped to
// [20 us, 10 ms]: an answer that arrives while sleeping is seen at most
// ~1.6% late (plus 20 us), and a rank idle for long wakes about 100 times a
// second. A waiter's wait is often a whole round of the engine (a draft
// rank's, from its answer to the next verdict), so lateness adds to every
// round trip: at 1/8 a zoo draft rank saw its requests 1.1 ms after they
// were sent and rank 0 its answers 0.5 ms after, for 0.9 ms of drafting.
// The tests in between cost a waiting rank a few percent of a core.
// Not thread-safe: one per waiter.
#pragma once

#include <algorithm>
#include <chrono>

namespace seed::parallel {

class IdleBackoff {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr std::chrono::microseconds kMinSleep{20};
  static constexpr std::chrono::microseconds kMaxSleep{10000};
  static constexpr int kLateness = 64;  // a sleep is the time waited over this

  IdleBackoff() : since_(Clock::now()) {}
  // Progress was made: the next wait starts short again.
  void reset() { since_ = Clock::now(); }
  // The sleep before the next test.
  std::chrono::microseconds next() const {
    const auto waited = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - since_);
    return std::clamp(waited / kLateness, kMinSleep, kMaxSleep);
  }

 private:
  Clock::time_point since_;
};

}  // namespace seed::parallel
