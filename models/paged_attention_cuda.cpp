// paged_attention for a build with its CUDA kernels (cuda/paged_attention.cu).
#include "models/paged_attention.h"

#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/torch.h>

#include <cmath>
#include <cstdint>
#include <optional>

#include "models/base/error.h"
#include "models/cuda/paged_attention.h"

namespace seed::models {
namespace {

std::optional<cuda::Element> element_of(c10::ScalarType dtype) {
  switch (dtype) {
    case torch::kFloat: return cuda::Element::kFloat;
    case torch::kHalf: return cuda::Element::kHalf;
    case torch::kBFloat16: return cuda::Element::kBFloat16;
    default: return std::nullopt;
  }
}

}  // namespace

bool paged_attention_fits(const at::TensorOptions& options, int64_t seq, int64_t head_dim) {
  return options.device().is_cuda() && element_of(options.dtype().toScalarType()) &&
         seq <= kMaxPagedAttentionRows && head_dim <= cuda::kMaxHeadDim;
}

at::Tensor paged_attention(const at::Tensor& q, const at::Tensor& keys, const at::Tensor& values,
                           const PaddedBatch::Parts& parts, int64_t batch, int64_t seq, int64_t key_positions) {
  SEED_CHECK(paged_attention_fits(q.options(), seq, q.size(2)), kInternal) << "paged_attention given queries it does not take";
  SEED_CHECK(q.stride(2) == 1 && q.stride(1) == q.size(2) && keys.is_contiguous() && values.is_contiguous() &&
                 keys.scalar_type() == q.scalar_type() && values.scalar_type() == q.scalar_type(),
             kInternal)
      << "paged_attention needs heads contiguous in q and contiguous pools of q's dtype";
  const int64_t heads = q.size(1), dim = q.size(2), kv_heads = keys.size(1);
  c10::cuda::CUDAGuard on_device(q.device());
  at::Tensor out = torch::empty({batch * seq, heads * dim}, q.options());
  cuda::PagedAttentionArgs args;
  args.q = q.data_ptr();
  args.q_row_stride = q.stride(0);
  args.keys = keys.data_ptr();
  args.values = values.data_ptr();
  args.key_slots = parts.key_slots.data_ptr<int64_t>();
  args.cached = parts.cached.data_ptr<int64_t>();
  args.tree = parts.tree.data_ptr<int64_t>();
  args.out = out.data_ptr();
  args.batch = static_cast<int>(batch);
  args.seq = static_cast<int>(seq);
  args.key_positions = static_cast<int>(key_positions);
  args.heads = static_cast<int>(heads);
  args.kv_heads = static_cast<int>(kv_heads);
  args.dim = static_cast<int>(dim);
  args.scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(dim)));
  args.split_keys = cuda::choose_split_keys(args, at::cuda::getCurrentDeviceProperties()->multiProcessorCount);
  const auto aligned = [](const at::Tensor& t) { return reinterpret_cast<uintptr_t>(t.data_ptr()) % 16 == 0; };
  args.vector_loads = dim % cuda::kVectorElements == 0 && aligned(keys) && aligned(values);
  const int splits = cuda::paged_attention_splits(args);
  at::Tensor split_buffers;  // every split's outputs, maxima and sums
  if (splits > 1) {
    const int64_t row_heads = batch * seq * heads;
    split_buffers = torch::empty({splits * row_heads * (dim + 2)}, q.options().dtype(torch::kFloat));
    args.split_out = split_buffers.data_ptr<float>();
    args.split_max = args.split_out + splits * row_heads * dim;
    args.split_sum = args.split_max + splits * row_heads;
  }
  const cudaError_t launched = cuda::launch_paged_attention(args, *element_of(q.scalar_type()),
                                                            c10::cuda::getCurrentCUDAStream(q.device().index()));
  SEED_CHECK(launched == cudaSuccess, kInternal) << "paged attention's kernels failed to launch: "
                                                 << cudaGetErrorString(launched);
  return out;
}

}  // namespace seed::models
