// Attention that reads the paged KV cache in place, on a GPU
// (cuda/paged_attention.cu): the ATen layers' path for decode steps and
// k-token verification, where gathering every sequence's keys into a
// padded copy, and a mask beside them, cost more than attending itself.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/TensorOptions.h>

#include <cstdint>

#include "models/cuda/paged_attention_args.h"
#include "models/padded_batch.h"

namespace seed::models {

// New rows a sequence may have for paged_attention: decode steps, chains
// and trees to verify. Longer forwards (prompts) gather their keys and run
// SDPA, whose tensor-core products win at their sizes.
constexpr int64_t kMaxPagedAttentionRows = 16;

// The most key positions one thread block of paged_attention reads (a
// split): a forward's blocks cover its key positions in splits of at most
// this many, and those past a sequence's own keys return at once.
constexpr int64_t kPagedAttentionSplitKeys = cuda::kMaxSplitKeys;

// Whether paged_attention serves a forward of `seq` new rows a sequence
// computing with `options`, heads of `head_dim`: this build has the kernels
// (nvcc beside a libtorch with CUDA), the device is a GPU, the dtype
// float32, float16 or bfloat16, seq <= kMaxPagedAttentionRows and the head
// within the kernels' widest.
bool paged_attention_fits(const at::TensorOptions& options, int64_t seq, int64_t head_dim);

// Grouped-query attention of a padded batch's rows, as attention() computes
// it over keys gathered by key_slots and masked by attention_allowed():
// softmax(q k / sqrt(D)) v over the keys each row may attend to. q [B*S, H,
// D] (RoPE'd; rows may be strided, heads contiguous); keys and values
// [slots, Hkv, D], one layer's pool; parts on q's device. Returns [B*S,
// H*D] in q's dtype. REQUIRES paged_attention_fits(q.options(), seq, D).
at::Tensor paged_attention(const at::Tensor& q, const at::Tensor& keys, const at::Tensor& values,
                           const PaddedBatch::Parts& parts, int64_t batch, int64_t seq, int64_t key_positions);

}  // namespace seed::models
