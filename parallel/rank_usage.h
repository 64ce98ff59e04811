// RankUsage: how a rank spent its time under mpirun, for `seed bench`
// (rank 0 asks each worker rank with a usage-request message, wire.h) and
// for the log line each worker rank writes at exit.
//
// A worker rank is busy while it runs a drafter or target call for the
// coordinator; the rest of its wall time it waits for the next message
// (sleeping, IdleBackoff). Rank 0 has no such calls, so it reports the CPU
// time of its process as busy. UsageMeter measures one serve loop; not
// thread-safe (the loop's thread only).
#pragma once

#include <chrono>
#include <cstdint>
#include <ctime>

namespace seed::parallel {

struct RankUsage {
  int rank = 0;       // world rank
  double busy_s = 0;  // in drafter or target calls (rank 0: CPU time)
  double wall_s = 0;  // since the rank's serve loop (rank 0: its coordinator) started
  double cpu_s = 0;   // CPU time of the process, all threads, over wall_s
};

// What a worker rank's serve loop returns.
struct WorkerStats {
  int64_t messages = 0;  // received, shutdown included
  int64_t requests = 0;  // answered drafts (draft rank) or verifies (target group ranks)
  int64_t batches = 0;   // draft rank: the draft messages that asked for them
  RankUsage usage;
};

// CPU time of this process, all threads, in seconds.
inline double process_cpu_s() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

class UsageMeter {
 public:
  using Clock = std::chrono::steady_clock;

  explicit UsageMeter(int rank) : rank_(rank), start_(Clock::now()), cpu_start_(process_cpu_s()) {}
  // Counts the time since `t0` as busy.
  void add_busy(Clock::time_point t0) { busy_s_ += seconds_since(t0); }
  // The usage so far.
  RankUsage now() const { return {rank_, busy_s_, seconds_since(start_), process_cpu_s() - cpu_start_}; }

 private:
  static double seconds_since(Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
  }

  int rank_;
  Clock::time_point start_;
  double cpu_start_;
  double busy_s_ = 0;
};

}  // namespace seed::parallel
