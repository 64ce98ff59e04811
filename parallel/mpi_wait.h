// Waiting for a non-blocking MPI operation without spinning a core: test it,
// and sleep between tests (IdleBackoff). Open MPI's blocking calls poll, so
// a rank that may wait long (a worker between requests) waits this way.
#pragma once

#include <mpi.h>

#include <thread>

#include "parallel/idle_backoff.h"
#include "parallel/mpi_session.h"

namespace seed::parallel {

// Returns once `request` has completed. Throws kInternal if MPI fails.
inline void wait_without_spinning(MPI_Request* request) {
  IdleBackoff backoff;
  while (true) {
    int done = 0;
    check_mpi(MPI_Test(request, &done, MPI_STATUS_IGNORE), "MPI_Test");
    if (done) return;
    std::this_thread::sleep_for(backoff.next());
  }
}

}  // namespace seed::parallel
