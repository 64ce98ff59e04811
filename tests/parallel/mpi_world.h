// The MPI session of a test binary run under mpirun (mpi_main.cpp).
#pragma once

#include "parallel/mpi_session.h"

namespace seed::parallel::testing {

// Alive for the whole run of the tests.
MpiSession& mpi_world();

}  // namespace seed::parallel::testing
