// Paged attention's CUDA kernels: the block code of
// paged_attention_blocks.cuh, launched on the caller's stream.
#include "models/cuda/paged_attention.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace seed::models::cuda {

// The element types, read and written as float by the block code.
__device__ inline float load(const float* p) { return *p; }
__device__ inline float load(const __half* p) { return __half2float(*p); }
__device__ inline float load(const __nv_bfloat16* p) { return __bfloat162float(*p); }
__device__ inline void store(float* p, float x) { *p = x; }
__device__ inline void store(__half* p, float x) { *p = __float2half(x); }
__device__ inline void store(__nv_bfloat16* p, float x) { *p = __float2bfloat16(x); }

// kVectorElements (8) elements in 16-byte loads: float32 in two, the
// two-byte types in one, each element widened as load() widens it.
__device__ inline void load_vector(const float* p, float* out) {
  const float4 low = reinterpret_cast<const float4*>(p)[0], high = reinterpret_cast<const float4*>(p)[1];
  out[0] = low.x, out[1] = low.y, out[2] = low.z, out[3] = low.w;
  out[4] = high.x, out[5] = high.y, out[6] = high.z, out[7] = high.w;
}
template <typename T>
__device__ inline void load_vector(const T* p, float* out) {
  static_assert(sizeof(T) * kVectorElements == sizeof(uint4), "two-byte elements");
  const uint4 raw = *reinterpret_cast<const uint4*>(p);
  const T* elements = reinterpret_cast<const T*>(&raw);
  for (int j = 0; j < kVectorElements; ++j) out[j] = load(elements + j);
}

}  // namespace seed::models::cuda

#include "models/cuda/paged_attention_blocks.cuh"

namespace seed::models::cuda {
namespace {

template <typename T>
__global__ void __launch_bounds__(kThreads) attend_split_kernel(PagedAttentionArgs a, int tile) {
  extern __shared__ float shared[];
  attend_split<T>(a, tile, shared);
}

template <typename T>
__global__ void __launch_bounds__(kThreads) combine_split_kernel(PagedAttentionArgs a, int splits) {
  combine_split<T>(a, splits);
}

template <typename T>
cudaError_t launch(const PagedAttentionArgs& a, cudaStream_t stream) {
  const AttendGrid g = attend_grid(a);
  const dim3 grid(g.sequence_heads * g.row_tiles, g.splits);
  attend_split_kernel<T><<<grid, kThreads, g.shared_bytes, stream>>>(a, g.tile_keys);
  if (g.splits > 1) combine_split_kernel<T><<<a.batch * a.seq * a.heads, kThreads, 0, stream>>>(a, g.splits);
  return cudaGetLastError();
}

}  // namespace

cudaError_t launch_paged_attention(const PagedAttentionArgs& args, Element element, cudaStream_t stream) {
  switch (element) {
    case Element::kFloat: return launch<float>(args, stream);
    case Element::kHalf: return launch<__half>(args, stream);
    case Element::kBFloat16: return launch<__nv_bfloat16>(args, stream);
  }
  return cudaErrorInvalidValue;
}

}  // namespace seed::models::cuda
