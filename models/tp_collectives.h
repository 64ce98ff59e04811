// TpCollectives: what a tensor-parallel CausalLM needs from its group.
//
// models/ declares the interface and parallel/ implements it
// (parallel::Communicator over MPI, NCCL or one process), so the model
// layer knows nothing of ranks or transports and the dependency runs one
// way: parallel/ -> models/. A rank's forward() calls these in the same
// order on every rank of the group, with tensors of the same shape and dtype
// (a rank that skips one blocks the others). Not thread-safe: one caller at
// a time.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

namespace seed::models {

class TpCollectives {
 public:
  virtual ~TpCollectives() = default;

  // This rank's index in the group, 0..size()-1, and the group's size: which
  // shard the model holds (TpShard::of).
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Every rank's `tensor` becomes the element-wise sum over the group.
  // REQUIRES a contiguous tensor on the backend's device.
  virtual void all_reduce_sum(at::Tensor& tensor) = 0;
  // The ranks' tensors concatenated along `dim` in rank order; every rank
  // gets the result. REQUIRES equal shapes on every rank.
  virtual at::Tensor all_gather(const at::Tensor& tensor, int64_t dim) = 0;
};

}  // namespace seed::models
