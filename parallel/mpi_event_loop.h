// MpiEventLoop: the coordinator's one thread for point-to-point messages
// with worker ranks (README.md, "Running under mpirun"; a Boost.Asio event
// loop over non-blocking MPI).
//
// Callers on any thread (the SEED engine's drafter workers, through their
// RemoteDrafter) hand it sends and the replies they expect; only the loop
// thread calls MPI (MPI_Isend, MPI_Improbe + MPI_Mrecv, MPI_Test), so the
// callers never contend inside MPI and never spin: a caller waiting for a
// reply blocks on a future. While operations are outstanding the loop tests
// them on an Asio timer with IdleBackoff's period; with none it sleeps in
// io_context::run.
//
// Faults: a reply not received within its timeout, or a send that fails or
// does not complete within it, marks the rank unavailable. Its pending and
// later calls fail at once with seed::Error kUnavailable naming the rank;
// later sends to it are dropped. Nothing is retried: what to do instead
// (another drafter, target-only decoding) is the engine's decision.
//
// Thread-safe. Message counts and bytes are kept for `seed bench`.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

#include "parallel/mpi_session.h"

namespace seed::parallel {

struct MessageCounts {
  int64_t sent = 0;
  int64_t sent_bytes = 0;
  int64_t received = 0;
  int64_t received_bytes = 0;
};

class MpiEventLoop {
 public:
  using Duration = std::chrono::milliseconds;

  // Starts the loop thread. `session` must outlive this object. Throws
  // kUnavailable if MPI was not granted MPI_THREAD_MULTIPLE (the loop
  // thread and the main thread, which may run a target group's
  // collectives, both call MPI).
  explicit MpiEventLoop(const MpiSession& session);
  // Waits (each at most its timeout) for sends to available ranks to
  // complete, so that a final shutdown message is delivered, then stops.
  ~MpiEventLoop();
  MpiEventLoop(const MpiEventLoop&) = delete;
  MpiEventLoop& operator=(const MpiEventLoop&) = delete;

  // Queues `bytes` for world rank `rank` on `tag`; returns at once. Messages
  // to one rank on one tag arrive in the order they were sent. A send that
  // fails marks the rank unavailable; it is not reported here.
  void send(int rank, int tag, std::vector<uint8_t> bytes, Duration timeout);
  // As send, but also to an unavailable rank: a last message (shutdown)
  // that a rank which was only slow may still take. Never reported.
  void send_last(int rank, int tag, std::vector<uint8_t> bytes, Duration timeout);
  // Sends `request`, then blocks until `rank` sends a message on
  // `reply_tag`, and returns its bytes. Throws kUnavailable naming the rank
  // if it is (or becomes) unavailable or nothing arrives within `timeout`.
  // REQUIRES at most one call waiting per (rank, reply_tag). counted =
  // false leaves the two messages out of counts() (bookkeeping, such as
  // rank 0 asking a rank's usage, is not the run's traffic).
  std::vector<uint8_t> call(int rank, int tag, std::vector<uint8_t> request, int reply_tag, Duration timeout,
                            bool counted = true);

  bool available(int rank) const;
  MessageCounts counts() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace seed::parallel
