// MpiSession: MPI initialised for the lifetime of one object per process.
//
// The launcher creates one in main (before any communicator) and keeps it
// until every communicator is gone; its destructor finalises MPI. MPI is
// asked for MPI_THREAD_MULTIPLE, since the coordinator's event loop and the
// engines' worker threads may each talk to other ranks; thread_multiple()
// says whether the library granted it. Errors on MPI_COMM_WORLD are made to
// return (MPI_ERRORS_RETURN) so that seed reports them as seed::Error
// naming the call, instead of MPI aborting with its own message.
// Not thread-safe: construct and destroy from the main thread.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace seed::parallel {

class Communicator;

class MpiSession {
 public:
  // Throws kInternal if MPI was initialised already (a second session) or
  // MPI_Init_thread fails. argc/argv may be null. Every rank then waits in
  // a barrier for every other to have started MPI. Past `start_limit` (0:
  // no bound), `on_start_hang` runs on another thread and must end the
  // process without MPI (MPI_Abort needs MPI started): a rank stopped or
  // hung before MPI_Init returns keeps every other rank in MPI_Init or the
  // barrier, where no message of the job can reach them.
  MpiSession(int* argc, char*** argv, std::chrono::milliseconds start_limit = std::chrono::milliseconds(0),
             std::function<void()> on_start_hang = {});
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

  int world_rank() const { return world_rank_; }
  int world_size() const { return world_size_; }
  // This rank's place among the ranks of its node (those sharing its
  // memory, MPI_COMM_TYPE_SHARED), in world order: which of the node's GPUs
  // it takes (rank_device).
  int node_rank() const { return node_rank_; }
  bool thread_multiple() const { return thread_multiple_; }

  // Ends every rank of the job with exit status `code` (MPI_Abort): what a
  // rank does after reporting a fatal error, so that no other rank hangs.
  [[noreturn]] static void abort_job(int code);

  // Bounds the destructor's MPI_Finalize, which waits for every rank: past
  // `limit`, `on_hang` runs on another thread, to report and abort_job().
  // A rank stopped after its last message would otherwise keep the job,
  // and mpirun, waiting for ever.
  void limit_finalize(std::chrono::milliseconds limit, std::function<void()> on_hang);

  // The communicator of world ranks [first_world_rank, first_world_rank +
  // count), made by those ranks on their first call (make_mpi_communicator:
  // each of them must call it with the same arguments) and kept until the
  // session ends, so that a model loaded over it (a tensor-parallel target)
  // can serve the later runs of the process. Null on ranks outside the group.
  Communicator* group(int first_world_rank, int count);

  // The communicator `make` gives on the first call with `name` (NCCL over
  // a group's ranks), kept as group()'s are; freed before them.
  Communicator* kept(const std::string& name, const std::function<std::unique_ptr<Communicator>()>& make);

 private:
  int world_rank_ = 0;
  int world_size_ = 1;
  bool thread_multiple_ = false;
  std::chrono::milliseconds finalize_limit_{0};  // 0: no bound
  std::function<void()> on_finalize_hang_;
  int node_rank_ = 0;
  // By name, in the order made: freed last first, so that one made over
  // another (NCCL over its MPI bootstrap group) goes before it.
  std::vector<std::pair<std::string, std::unique_ptr<Communicator>>> kept_;
};

// Throws kInternal naming `call` and MPI's error string unless `code` is
// MPI_SUCCESS. For parallel/ only.
void check_mpi(int code, const char* call);

}  // namespace seed::parallel
