// Shared by the MPI and NCCL backends: the checks every collective makes on
// its arguments, and the reshuffle that turns a rank-major gather buffer
// into a concatenation along any dimension.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

namespace seed::parallel::detail {

// kInvalidArgument naming `backend` and `op` for an undefined or
// non-contiguous tensor, or a root outside [0, size).
void check_tensor(const at::Tensor& tensor, const char* backend, const char* op);
void check_root(int root, int size, const char* backend);

// `dim` of a tensor of `rank` dimensions, negative counting from the end;
// kInvalidArgument if it is outside.
int64_t normalize_dim(int64_t dim, int64_t rank, const char* backend);

// stacked [P, d0, .., dn]: the P ranks' tensors in rank order, as the
// backends' all-gather writes them. Returns them concatenated along `dim`
// (already normalized): [d0, .., P * d_dim, .., dn].
at::Tensor concat_gathered(const at::Tensor& stacked, int64_t dim);

}  // namespace seed::parallel::detail
