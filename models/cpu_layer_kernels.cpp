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

// Attended entries per step of the online softmax: the scratch a row needs
// is this many scores per query head, whatever the context.
constexpr int64_t kChunk = 64;

// A kv head's rows of successive slots are a row of the pool apart (kv_heads
// x dim floats, 2 KB for Llama 3's 8 x 64), so every key or value a row
// reads is on a page of its own to the hardware prefetchers, which stop at
// page boundaries: without a hint each waits for memory in turn, and a
// long context's attention ran at a third of the memory bandwidth.
// Entries this far ahead are asked for while the current one is used.
constexpr int64_t kPrefetchAhead = 8;

// Asks for the dim floats at p (a key's or a value's row of one kv head).
SEED_INLINE void prefetch_row(const float* p, int64_t dim) {
  for (int64_t i = 0; i < dim; i += 16) __builtin_prefetch(p + i, /*rw=*/0, /*locality=*/1);
}

// Replaces s[0, n) by exp(s - top) and returns their sum.
SEED_INLINE float exp_sum(float* __restrict s, int64_t n, float top) {
  for (int64_t j = 0; j < n; ++j) s[j] = exp_nonpositive(s[j] - top);
  float part[kLanes] = {};
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes) {
    for (int64_t t = 0; t < kLanes; ++t) part[t] += s[j + t];
  }
  for (int64_t t = 0; j < n; ++j, ++t) part[t] += s[j];
  return fold(part);
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

// out[0, W) += sum over j of p[j] * (values + slots[j] * stride)[0, W), W a
// multiple of 16. The sums stay in registers across positions; written as
// plain loops, the compiler kept them in memory and chained every
// position's add through a store and a reload.
template <typename Vec, int64_t W>
SEED_INLINE void weighted_sum(const float* __restrict p, const int64_t* slots, int64_t n,
                              const float* __restrict values, int64_t stride, float* __restrict out) {
  constexpr int64_t kVectors = W / kLanesOf<Vec>;
  Vec acc[kVectors];
  std::memcpy(acc, out, sizeof acc);
  for (int64_t j = 0; j < n; ++j) {
    if (j + kPrefetchAhead < n) prefetch_row(values + slots[j + kPrefetchAhead] * stride, W);
    const float* v = values + slots[j] * stride;
    for (int64_t i = 0; i < kVectors; ++i) acc[i] += p[j] * load<Vec>(v + kLanesOf<Vec> * i);
  }
  std::memcpy(out, acc, sizeof acc);
}

// One query row against one kv head: the `group` query heads that read it.
// scratch holds their scaled queries [group, dim], the scores of one chunk
// [group, kChunk], and each head's running maximum and sum [group] each.
// The output rows accumulate the weighted values, rescaled whenever a
// chunk raises a head's maximum.
template <typename Vec>
SEED_INLINE void attend(const PagedAttentionArgs& a, int64_t row, int64_t kv_head, float* scratch) {
  const int64_t group = a.heads / a.kv_heads, dim = a.dim, kv_stride = a.kv_heads * dim;
  const int64_t n = a.rows->length(row);
  float* q = scratch;
  float* scores = q + group * dim;
  float* top = scores + group * kChunk;
  float* sum = top + group;
  const float scale = 1.0f / std::sqrt(static_cast<float>(dim));
  const float* q_in = a.q + row * a.q_stride + kv_head * group * dim;
  for (int64_t i = 0; i < group * dim; ++i) q[i] = q_in[i] * scale;
  float* out = a.out + row * a.heads * dim + kv_head * group * dim;
  std::fill(out, out + group * dim, 0.0f);
  const float* v = a.values + kv_head * dim;
  int64_t slots[kChunk];
  for (int64_t first = 0; first < n; first += kChunk) {
    const int64_t c = std::min(kChunk, n - first);
    a.rows->slots(row, first, c, slots);
    for (int64_t j = 0; j < std::min(c, kPrefetchAhead); ++j) {  // the loops below ask for the rest
      prefetch_row(a.keys + slots[j] * kv_stride + kv_head * dim, dim);
      prefetch_row(v + slots[j] * kv_stride, dim);
    }
    for (int64_t j = 0; j < c; ++j) {
      if (j + kPrefetchAhead < c) prefetch_row(a.keys + slots[j + kPrefetchAhead] * kv_stride + kv_head * dim, dim);
      const float* k = a.keys + slots[j] * kv_stride + kv_head * dim;
      for (int64_t h = 0; h < group; ++h) scores[h * kChunk + j] = dot(q + h * dim, k, dim);
    }
    for (int64_t h = 0; h < group; ++h) {
      float* p = scores + h * kChunk;
      float chunk_top = p[0];
      for (int64_t j = 1; j < c; ++j) chunk_top = std::max(chunk_top, p[j]);
      float* o = out + h * dim;
      if (first == 0) {
        top[h] = chunk_top;
        sum[h] = exp_sum(p, c, chunk_top);
      } else {
        const float new_top = std::max(top[h], chunk_top);
        const float rescale = exp_nonpositive(top[h] - new_top);
        top[h] = new_top;
        sum[h] = sum[h] * rescale + exp_sum(p, c, new_top);
        if (rescale != 1.0f) {
          for (int64_t i = 0; i < dim; ++i) o[i] *= rescale;
        }
      }
      int64_t d = 0;
      for (; d + 64 <= dim; d += 64) weighted_sum<Vec, 64>(p, slots, c, v + d, kv_stride, o + d);
      for (; d + 32 <= dim; d += 32) weighted_sum<Vec, 32>(p, slots, c, v + d, kv_stride, o + d);
      for (; d + 16 <= dim; d += 16) weighted_sum<Vec, 16>(p, slots, c, v + d, kv_stride, o + d);
      for (int64_t j = 0; d < dim && j < c; ++j) {  // the rest of a head size that is not a multiple of 16
        for (int64_t i = d; i < dim; ++i) o[i] += p[j] * v[slots[j] * kv_stride + i];
      }
    }
  }
  for (int64_t h = 0; h < group; ++h) {
    const float inv_sum = 1.0f / sum[h];
    for (int64_t i = 0; i < dim; ++i) out[h * dim + i] *= inv_sum;
  }
}

template <typename Vec>
SEED_INLINE void attention_items(const PagedAttentionArgs& a, int64_t begin, int64_t end) {
  const int64_t group = a.heads / a.kv_heads;
  std::vector<float> scratch(group * (a.dim + kChunk + 2));
  for (int64_t item = begin; item < end; ++item) {
    attend<Vec>(a, item / a.kv_heads, item % a.kv_heads, scratch.data());
  }
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

int64_t AttentionRows::total_length() const {
  int64_t total = 0;
  for (int64_t m = 0; m < count(); ++m) total += length(m);
  return total;
}

void AttentionRows::add(const int32_t* table, int64_t prefix_length, const int64_t* extra_slots,
                        int64_t extra_count) {
  tables.push_back(table);
  prefix.push_back(prefix_length);
  extra.insert(extra.end(), extra_slots, extra_slots + extra_count);
  begin.push_back(static_cast<int64_t>(extra.size()));
}

void AttentionRows::slots(int64_t m, int64_t first, int64_t n, int64_t* out) const {
  const int64_t end = first + n, in_table = std::min(end, prefix[m]);
  int64_t p = first;
  while (p < in_table) {  // one block at a time
    const int64_t block_start = p - p % block_size;
    const int64_t slot_of_start = tables[m][p / block_size] * block_size;
    const int64_t stop = std::min(in_table, block_start + block_size);
    for (; p < stop; ++p) *out++ = slot_of_start + (p - block_start);
  }
  for (; p < end; ++p) *out++ = extra[begin[m] + p - prefix[m]];
}

void paged_attention(CpuKernel kernel, const PagedAttentionArgs& args) {
  const int64_t rows = args.rows->count(), items = rows * args.kv_heads;
  if (items == 0) return;
  // Each item reads its slots' keys and values once per query head.
  const int64_t flops_per_item =
      std::max<int64_t>(1, 4 * args.dim * (args.heads / args.kv_heads) * args.rows->total_length() / rows);
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
