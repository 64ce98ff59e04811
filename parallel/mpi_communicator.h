// The MPI backend of Communicator (communicator.h): CPU tensors.
//
// A group is a contiguous range of world ranks, so that the target group
// (world ranks 1..T) runs its collectives on its own MPI communicator while
// rank 0 and the draft ranks do other work. Supported dtypes: float32,
// float64, int32, int64, uint8, int8 (the all-reduce sums in the dtype).
// broadcast_idle is MPI_Ibcast tested between IdleBackoff sleeps.
#pragma once

#include <memory>

#include "parallel/communicator.h"

namespace seed::parallel {

// World ranks [first_world_rank, first_world_rank + count) become group
// ranks 0..count-1. Collective over the group's ranks only, which must each
// call it with the same arguments; a rank outside the range gets nullptr
// without waiting on any other.
// REQUIRES a live MpiSession. Throws kInvalidArgument if the range is empty
// or not inside the world (naming it and the world size), kInternal with
// MPI's message if MPI fails. Collectives on non-CPU tensors throw
// kInvalidArgument (CUDA tensors go through the NCCL backend).
std::unique_ptr<Communicator> make_mpi_communicator(int first_world_rank, int count);

}  // namespace seed::parallel
