#include "parallel/blocking_messages.h"

#include <cstdint>
#include <mpi.h>

#include <thread>

#include "parallel/idle_backoff.h"
#include "parallel/mpi_session.h"
#include "parallel/mpi_wait.h"

namespace seed::parallel {

std::vector<uint8_t> receive_message(int source, int tag) {
  IdleBackoff backoff;
  while (true) {
    int found = 0;
    MPI_Message message;
    MPI_Status status;
    check_mpi(MPI_Improbe(source, tag, MPI_COMM_WORLD, &found, &message, &status), "MPI_Improbe");
    if (found) {
      int size = 0;
      MPI_Get_count(&status, MPI_BYTE, &size);
      std::vector<uint8_t> bytes(static_cast<size_t>(size));
      check_mpi(MPI_Mrecv(bytes.data(), size, MPI_BYTE, &message, MPI_STATUS_IGNORE), "MPI_Mrecv");
      return bytes;
    }
    std::this_thread::sleep_for(backoff.next());
  }
}

void send_message(int dest, int tag, const std::vector<uint8_t>& bytes) {
  MPI_Request request;
  check_mpi(MPI_Isend(bytes.data(), static_cast<int>(bytes.size()), MPI_BYTE, dest, tag, MPI_COMM_WORLD, &request),
            "MPI_Isend");
  wait_without_spinning(&request);
}

}  // namespace seed::parallel
