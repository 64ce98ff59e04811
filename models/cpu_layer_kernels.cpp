#include "models/cpu_layer_kernels.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "models/base/exp_nonpositive.h"

// load<Vec> returns vectors wider than the baseline ISA's registers; it is
// only ever inlined into functions built for an ISA that has them.
#pragma GCC diagnostic ignored "-Wpsabi"

namespace seed::models {
namespace {

// Partial sums per reduction: one zmm, two ymm or four xmm, so that the
// compiler vectorises the sums without reordering them.
constexpr int64_t kLanes = 16;
constexpr int64_t kMinFlopsPerThread = int64_t{1} << 17;

// The bodies below are written once and inlined into one function per
// instruction set (the target attributes at the end), which the compiler
// vectorises for that set.
#define SEED_INLINE inline __attribute__((always_inline))

// Sums 16 partial sums in a fixed tree (halves added lane-wise), so that the
// reduction is a few vector adds rather than sixteen dependent scalar ones.
SEED_INLINE float fold(float (&part)[kLanes]) {
  for (int64_t t = 0; t < 8; ++t) part[t] += part[t + 8];
  for (int64_t t = 0; t < 4; ++t) part[t] += part[t + 4];
  return (part[0] + part[2]) + (part[1] + part[3]);
}

SEED_INLINE float dot(const float* __restrict a, const float* __restrict b, int64_t n) {
  float part[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int64_t t = 0; t < kLanes; ++t) part[t] += a[i + t] * b[i + t];
  }
  for (int64_t t = 0; i < n; ++i, ++t) part[t] += a[i] * b[i];
  return fold(part);
}

// Replaces s[0, n) by exp(s - max s) and returns 1 / their sum.
SEED_INLINE float softmax_numerators(float* __restrict s, int64_t n) {
  float top = s[0];
  for (int64_t j = 1; j < n; ++j) top = std::max(top, s[j]);
  for (int64_t j = 0; j < n; ++j) s[j] = exp_nonpositive(s[j] - top);
  float part[kLanes] = {};
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes) {
    for (int64_t t = 0; t < kLanes; ++t) part[t] += s[j + t];
  }
  for (int64_t t = 0; j < n; ++j, ++t) part[t] += s[j];
  return 1.0f / fold(part);
}

// Vectors of floats as values (a GCC vector extension), one per instruction
// set's register width: each instantiation below keeps its sums in registers.
typedef float Zmm __attribute__((vector_size(64)));
typedef float Ymm __attribute__((vector_size(32)));
typedef float Xmm __attribute__((vector_size(16)));

template <typename Vec>
constexpr int64_t kLanesOf = sizeof(Vec) / sizeof(float);

template <typename Vec>
SEED_INLINE Vec load(const float* p) {
  Vec v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// out[0, W) = sum over j of p[j] * (values + slots[j] * stride)[0, W), W a
// multiple of 16. The sums stay in registers across positions; written as
// plain loops, the compiler kept them in memory and chained every
// position's add through a store and a reload.
template <typename Vec, int64_t W>
SEED_INLINE void weighted_sum(const float* __restrict p, const int64_t* slots, int64_t n,
                              const float* __restrict values, int64_t stride, float* __restrict out) {
  constexpr int64_t kVectors = W / kLanesOf<Vec>;
  Vec acc[kVectors] = {};
  for (int64_t j = 0; j < n; ++j) {
    const float* v = values + slots[j] * stride;
    for (int64_t i = 0; i < kVectors; ++i) acc[i] += p[j] * load<Vec>(v + kLanesOf<Vec> * i);
  }
  std::memcpy(out, acc, sizeof acc);
}

// One query row against one kv head: the `group` query heads that read it.
// scratch holds their scores [group, n], scaled queries [group, dim] and
// softmax denominators [group].
template <typename Vec>
SEED_INLINE void attend(const PagedAttentionArgs& a, int64_t row, int64_t kv_head, std::vector<float>& scratch) {
  const int64_t group = a.heads / a.kv_heads, dim = a.dim, kv_stride = a.kv_heads * dim;
  const int64_t first = a.rows->begin[row], n = a.rows->begin[row + 1] - first;
  const int64_t* slots = a.rows->slots.data() + first;
  scratch.resize(group * (n + dim + 1));
  float* scores = scratch.data();
  float* q = scores + group * n;
  float* inv_sum = q + group * dim;
  const float scale = 1.0f / std::sqrt(static_cast<float>(dim));
  const float* q_in = a.q + row * a.q_stride + kv_head * group * dim;
  for (int64_t i = 0; i < group * dim; ++i) q[i] = q_in[i] * scale;
  for (int64_t j = 0; j < n; ++j) {
    const float* k = a.keys + slots[j] * kv_stride + kv_head * dim;
    for (int64_t h = 0; h < group; ++h) scores[h * n + j] = dot(q + h * dim, k, dim);
  }
  for (int64_t h = 0; h < group; ++h) inv_sum[h] = softmax_numerators(scores + h * n, n);
  float* out = a.out + row * a.heads * dim + kv_head * group * dim;
  const float* v = a.values + kv_head * dim;
  for (int64_t h = 0; h < group; ++h) {
    const float* p = scores + h * n;
    float* o = out + h * dim;
    int64_t d = 0;
    for (; d + 64 <= dim; d += 64) weighted_sum<Vec, 64>(p, slots, n, v + d, kv_stride, o + d);
    for (; d + 32 <= dim; d += 32) weighted_sum<Vec, 32>(p, slots, n, v + d, kv_stride, o + d);
    for (; d + 16 <= dim; d += 16) weighted_sum<Vec, 16>(p, slots, n, v + d, kv_stride, o + d);
    if (d < dim) {  // the rest of a head size that is not a multiple of 16
      std::fill(o + d, o + dim, 0.0f);
      for (int64_t j = 0; j < n; ++j) {
        for (int64_t i = d; i < dim; ++i) o[i] += p[j] * v[slots[j] * kv_stride + i];
      }
    }
    for (int64_t i = 0; i < dim; ++i) o[i] *= inv_sum[h];
  }
}

template <typename Vec>
SEED_INLINE void attention_items(const PagedAttentionArgs& a, int64_t begin, int64_t end) {
  std::vector<float> scratch;
  for (int64_t item = begin; item < end; ++item) attend<Vec>(a, item / a.kv_heads, item % a.kv_heads, scratch);
}

// silu(g) = g * sigmoid(g), with exp taken of -|g| only, so it never overflows.
SEED_INLINE void silu_mul_body(float* __restrict gate, const float* __restrict up, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float g = gate[i];
    const float e = exp_nonpositive(-std::fabs(g));
    gate[i] = g * ((g >= 0 ? 1.0f : e) / (1.0f + e)) * up[i];
  }
}

__attribute__((target("avx512f"))) void attention_avx512(const PagedAttentionArgs& a, int64_t begin, int64_t end) {
  attention_items<Zmm>(a, begin, end);
}
__attribute__((target("avx2,fma"))) void attention_avx2(const PagedAttentionArgs& a, int64_t begin, int64_t end) {
  attention_items<Ymm>(a, begin, end);
}
void attention_portable(const PagedAttentionArgs& a, int64_t begin, int64_t end) {
  attention_items<Xmm>(a, begin, end);
}

__attribute__((target("avx512f"))) void silu_mul_avx512(float* gate, const float* up, int64_t n) {
  silu_mul_body(gate, up, n);
}
__attribute__((target("avx2,fma"))) void silu_mul_avx2(float* gate, const float* up, int64_t n) {
  silu_mul_body(gate, up, n);
}
void silu_mul_portable(float* gate, const float* up, int64_t n) { silu_mul_body(gate, up, n); }

}  // namespace

void paged_attention(CpuKernel kernel, const PagedAttentionArgs& args) {
  const int64_t rows = args.rows->count(), items = rows * args.kv_heads;
  if (items == 0) return;
  // Each item reads its slots' keys and values once per query head.
  const int64_t flops_per_item =
      std::max<int64_t>(1, 4 * args.dim * (args.heads / args.kv_heads) * static_cast<int64_t>(args.rows->slots.size()) / rows);
  const int64_t grain = std::max<int64_t>(1, kMinFlopsPerThread / flops_per_item);
  at::parallel_for(0, items, grain, [&](int64_t begin, int64_t end) {
    switch (kernel) {
      case CpuKernel::kAvx512: return attention_avx512(args, begin, end);
      case CpuKernel::kAvx2: return attention_avx2(args, begin, end);
      case CpuKernel::kPortable: return attention_portable(args, begin, end);
    }
  });
}

void silu_mul(CpuKernel kernel, float* gate, const float* up, int64_t n) {
  switch (kernel) {
    case CpuKernel::kAvx512: return silu_mul_avx512(gate, up, n);
    case CpuKernel::kAvx2: return silu_mul_avx2(gate, up, n);
    case CpuKernel::kPortable: return silu_mul_portable(gate, up, n);
  }
}

}  // namespace seed::models
