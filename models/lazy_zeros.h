// lazy_zeros: a CPU tensor of zeros in an anonymous mapping of its own.
//
// Why: a KV cache pool sized for its budget (or for the model's context)
// would otherwise be resident from the start, and a pool grown by copying
// holds the old and the new pool at once. The pages here are anonymous and
// mapped without reserving swap (MAP_NORESERVE): an untouched page reads as
// the shared zero page and takes a page of memory when first written, so a
// pool costs the blocks that hold tokens.
//
// Weights held for the whole run (the packed panels) take such a mapping
// too, on huge pages: were they on the malloc heap, the loader's freed
// temporaries would be left as holes between them, resident until exit
// (hundreds of MB on a 1B model), and a weight pass would walk 4 KB pages.
// Thread-safety: a plain tensor.
#pragma once

#include <ATen/core/Tensor.h>

namespace seed::models {

enum class Pages {
  kSmall,  // memory only for the pages written: KV pools
  kHuge,   // aligned to and advised for transparent huge pages: long-lived, fully written
           // tensors (below 2 MB: an ordinary tensor)
};

// Zeros of `shape` on the CPU in options' dtype. Where the system refuses
// the mapping (strict overcommit accounting), an ordinary zeroed tensor.
at::Tensor lazy_zeros(at::IntArrayRef shape, at::TensorOptions options, Pages pages = Pages::kSmall);

}  // namespace seed::models
