// lazy_zeros: a CPU tensor of zeros that takes memory only where written.
//
// Why: a KV cache pool sized for its budget (or for the model's context)
// would otherwise be resident from the start, and a pool grown by copying
// holds the old and the new pool at once. The pages here are anonymous and
// mapped without reserving swap (MAP_NORESERVE): an untouched page reads as
// the shared zero page and takes a page of memory when first written, so a
// pool costs the blocks that hold tokens. Thread-safety: a plain tensor.
#pragma once

#include <ATen/core/Tensor.h>

namespace seed::models {

// Zeros of `shape` on the CPU in options' dtype. Where the system refuses
// the mapping (strict overcommit accounting), an ordinary zeroed tensor.
at::Tensor lazy_zeros(at::IntArrayRef shape, at::TensorOptions options);

}  // namespace seed::models
