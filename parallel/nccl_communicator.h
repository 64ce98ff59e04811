// The NCCL backend of Communicator (communicator.h): CUDA tensors.
//
// Built when CMake finds the CUDA toolkit and NCCL (SEED_WITH_NCCL, on by
// default where /usr/local/cuda has them); otherwise make_nccl_communicator
// throws. It drives NCCL and the CUDA runtime directly on the tensors'
// data_ptr, so it compiles against a CPU-only libtorch too; there it can
// only reject the CPU tensors such a libtorch makes.
//
// Stream: collectives are enqueued on the legacy default stream, the one
// libtorch computes on unless a caller makes another stream current, so they
// follow the kernels that produced their input and precede those that read
// their output without a host synchronisation. A caller that switches
// libtorch's current stream must synchronise around collectives itself.
// Supported dtypes: float32, float16, bfloat16, float64, int32, int64, uint8.
#pragma once

#include <memory>

#include "parallel/communicator.h"

namespace seed::parallel {

// True when this build has the NCCL backend.
bool nccl_backend_built();

// A NCCL group over the ranks of `bootstrap` (the target group's MPI
// communicator; a local one for a single GPU): group rank 0 makes NCCL's
// unique id and broadcasts it through `bootstrap`. Collective over
// `bootstrap`. `device` is this rank's CUDA device, as the launcher assigns
// it (rank_device); `bootstrap` is borrowed for this call only.
// Throws kInvalidArgument if the build has no NCCL or there is no CUDA
// device `device` (naming the devices found), kInternal with NCCL's or
// CUDA's message on their failures. Collectives on tensors that are not
// CUDA tensors on `device` throw kInvalidArgument.
std::unique_ptr<Communicator> make_nccl_communicator(Communicator& bootstrap, int device);

}  // namespace seed::parallel
