// Communicator: the collectives a tensor-parallel group runs on tensors.
//
// A group of `size()` ranks numbered 0..size()-1 (the target group of
// README.md, "Running under mpirun": world ranks 1..T are group ranks 0..T-1).
// Every collective must be called by every rank of the group, in the same
// order, with tensors of the same shape and dtype; a rank that skips one
// blocks the others. Backends:
//   local  make_local_communicator(): one rank, every collective a no-op;
//          the single-process path.
//   mpi    make_mpi_communicator() (mpi_communicator.h): CPU tensors.
//   nccl   make_nccl_communicator() (nccl_communicator.h): CUDA tensors.
// The backend is chosen where the model lives (the launcher), never here.
// A Communicator is the models::TpCollectives a tensor-parallel CausalLM
// runs on (models/tp_collectives.h), plus what the rank loops need.
// Communicators are RAII (they free their MPI/NCCL communicator) and can be
// neither copied nor moved: callers hold them by unique_ptr. Not
// thread-safe: one caller at a time.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>

#include "models/tp_collectives.h"

namespace seed::parallel {

class Communicator : public models::TpCollectives {
 public:
  Communicator() = default;
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  // rank(), size(), all_reduce_sum() and all_gather(): models::TpCollectives.
  virtual const char* backend() const = 0;  // "local", "mpi" or "nccl"

  // Every rank's `tensor` becomes `root`'s, in place. REQUIRES a contiguous
  // tensor of the same shape and dtype on every rank.
  virtual void broadcast(at::Tensor& tensor, int root) = 0;
  // As broadcast, for one that ranks may wait on for long (a target group
  // peer waiting for its leader's next call): a waiting rank sleeps between
  // tests (IdleBackoff) instead of spinning a core. Every rank of the group
  // must use this one, not broadcast, for the same collective: MPI does not
  // match a non-blocking broadcast with a blocking one. Default: broadcast.
  virtual void broadcast_idle(at::Tensor& tensor, int root) { broadcast(tensor, root); }
  // Returns once every rank of the group has called it.
  virtual void barrier() = 0;
};

// The one-rank group: rank 0 of size 1, collectives leave tensors as they are.
std::unique_ptr<Communicator> make_local_communicator();

}  // namespace seed::parallel
