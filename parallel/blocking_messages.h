// Point-to-point messages for a worker rank's serve loop (a draft rank, the
// target group's leader): wait for one message, send one, without spinning
// a core (MPI_Improbe / MPI_Test with IdleBackoff's sleeps between tests).
// The coordinator does not use these: its MpiEventLoop never blocks.
// Thread-safe as MPI is (the session grants MPI_THREAD_MULTIPLE).
#pragma once

#include <cstdint>
#include <vector>

namespace seed::parallel {

// The next message from world rank `source` on `tag`. Throws kInternal if MPI fails.
std::vector<uint8_t> receive_message(int source, int tag);

// Sends `bytes` to world rank `dest` on `tag` and waits until MPI has taken
// them. Throws kInternal if MPI fails.
void send_message(int dest, int tag, const std::vector<uint8_t>& bytes);

}  // namespace seed::parallel
