// Preloaded (LD_PRELOAD) into seed's ranks by RankStartFaultTest: world
// rank SEED_TEST_STOP_RANK stops itself (SIGSTOP) as it starts making a
// communicator other than the world, after the start barrier and before its
// target group forms. Both calls a group can be made with stop it, so that
// the test shows what a stopped rank does to the job whichever the group is
// made with. Built on MPI's profiling interface: each call goes on to its
// PMPI_ twin.
#include <mpi.h>
#include <signal.h>

#include <cstdlib>

namespace {

void stop_if_chosen() {
  const char* chosen = std::getenv("SEED_TEST_STOP_RANK");
  int rank = -1;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (chosen != nullptr && std::atoi(chosen) == rank) raise(SIGSTOP);
}

}  // namespace

extern "C" int MPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm* created) {
  stop_if_chosen();
  return PMPI_Comm_create_group(comm, group, tag, created);
}

extern "C" int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm* created) {
  stop_if_chosen();
  return PMPI_Comm_split(comm, color, key, created);
}
