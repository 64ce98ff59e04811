// The launcher of paged attention's CUDA kernels (paged_attention.cu); only
// nvcc compiles them, and no torch header reaches nvcc.
// models/paged_attention.h is the ATen entry point.
#pragma once

#include <cuda_runtime_api.h>

#include "models/cuda/paged_attention_args.h"

namespace seed::models::cuda {

enum class Element { kFloat, kHalf, kBFloat16 };

// Launches the forward's attention on `stream`; the launch's error, or
// cudaSuccess. REQUIRES dim <= kMaxHeadDim, heads a multiple of kv_heads,
// with vector_loads dim a multiple of kVectorElements and keys and values
// aligned to 16 bytes, split buffers sized for paged_attention_splits(args)
// > 1.
cudaError_t launch_paged_attention(const PagedAttentionArgs& args, Element element, cudaStream_t stream);

}  // namespace seed::models::cuda
