#include "models/cpu_layer_kernels.h"

#include <ATen/Parallel.h>
#include <c10/util/BFloat16.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>

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

// A cached key or value entry as float32: itself, or a bfloat16's bits
// widened (exactly: bfloat16 is float32's upper half).
SEED_INLINE float widen(float x) { return x; }
SEED_INLINE float widen(uint16_t bits) {
  const uint32_t word = static_cast<uint32_t>(bits) << 16;
  float x;
  std::memcpy(&x, &word, sizeof x);
  return x;
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

// Asks for the dim entries at p (a key's or a value's row of one kv head).
template <typename T>
SEED_INLINE void prefetch_row(const T* p, int64_t dim) {
  constexpr int64_t kPerLine = 64 / sizeof(T);
  for (int64_t i = 0; i < dim; i += kPerLine) __builtin_prefetch(p + i, /*rw=*/0, /*locality=*/1);
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

// Per float vector, the vectors of as many bfloat16 and 32-bit words.
template <typename Vec>
struct BitsOf;
template <>
struct BitsOf<Zmm> {
  typedef uint16_t Half __attribute__((vector_size(32)));
  typedef uint32_t Word __attribute__((vector_size(64)));
};
template <>
struct BitsOf<Ymm> {
  typedef uint16_t Half __attribute__((vector_size(16)));
  typedef uint32_t Word __attribute__((vector_size(32)));
};
template <>
struct BitsOf<Xmm> {
  typedef uint16_t Half __attribute__((vector_size(8)));
  typedef uint32_t Word __attribute__((vector_size(16)));
};

// A vector of bfloat16 bits, widened lane by lane.
template <typename Vec>
SEED_INLINE Vec load(const uint16_t* p) {
  using Half = typename BitsOf<Vec>::Half;
  using Word = typename BitsOf<Vec>::Word;
  Half half;
  std::memcpy(&half, p, sizeof half);
  const Word word = __builtin_convertvector(half, Word) << 16;
  Vec v;
  std::memcpy(&v, &word, sizeof v);
  return v;
}

// The sum of a vector's lanes, halves added lane-wise in registers (the
// order `fold` sums in). Through memory, as fold does, reading a half back
// from a vector just stored stalls store forwarding: per key and head,
// that stall was most of a long context's attention.
SEED_INLINE float lane_sum(Xmm v) { return (v[0] + v[2]) + (v[1] + v[3]); }
SEED_INLINE float lane_sum(Ymm v) {
  return lane_sum(Xmm(__builtin_shufflevector(v, v, 0, 1, 2, 3)) + Xmm(__builtin_shufflevector(v, v, 4, 5, 6, 7)));
}
SEED_INLINE float lane_sum(Zmm v) {
  return lane_sum(Ymm(__builtin_shufflevector(v, v, 0, 1, 2, 3, 4, 5, 6, 7)) +
                  Ymm(__builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15)));
}

// a . b over n entries, b widened as it is loaded.
template <typename Vec, typename T>
SEED_INLINE float dot(const float* __restrict a, const T* __restrict b, int64_t n) {
  constexpr int64_t L = kLanesOf<Vec>;
  Vec acc = {};
  int64_t i = 0;
  for (; i + L <= n; i += L) acc += load<Vec>(a + i) * load<Vec>(b + i);
  float tail = 0.0f;
  for (; i < n; ++i) tail += a[i] * widen(b[i]);
  return lane_sum(acc) + tail;
}

// out[0, W) += sum over j of p[j] * (values + slots[j] * stride)[0, W), W a
// multiple of 16. The sums stay in registers across positions; written as
// plain loops, the compiler kept them in memory and chained every
// position's add through a store and a reload.
template <typename Vec, int64_t W, typename T>
SEED_INLINE void weighted_sum(const float* __restrict p, const int64_t* slots, int64_t n,
                              const T* __restrict values, int64_t stride, float* __restrict out) {
  constexpr int64_t kVectors = W / kLanesOf<Vec>;
  Vec acc[kVectors];
  std::memcpy(acc, out, sizeof acc);
  for (int64_t j = 0; j < n; ++j) {
    const T* v = values + slots[j] * stride;
    for (int64_t i = 0; i < kVectors; ++i) acc[i] += p[j] * load<Vec>(v + kLanesOf<Vec> * i);
  }
  std::memcpy(out, acc, sizeof acc);
}

// Row j of a chunk's widened values is row j: weighted_sum's slots for it.
constexpr int64_t kSuccessive[kChunk] = {0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14, 15,
                                         16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31,
                                         32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47,
                                         48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63};

// n cached entries as float32: a float32 row as it is, a bfloat16 one
// widened into `out`.
template <typename Vec>
SEED_INLINE const float* widened(const float* row, int64_t, float*) {
  return row;
}
template <typename Vec>
SEED_INLINE const float* widened(const uint16_t* row, int64_t n, float* out) {
  constexpr int64_t L = kLanesOf<Vec>;
  int64_t i = 0;
  for (; i + L <= n; i += L) {
    const Vec v = load<Vec>(row + i);
    std::memcpy(out + i, &v, sizeof v);
  }
  for (; i < n; ++i) out[i] = widen(row[i]);
  return out;
}

// One query row against the kv heads [kv_begin, kv_end), each with the
// `group` query heads that read it. Per kv head, scratch holds their scaled
// queries [group, dim], the scores of one chunk [group, kChunk], and each
// head's running maximum and sum [group] each (kScratchPerHead). The output
// rows accumulate the weighted values, rescaled whenever a chunk raises a
// head's maximum. A slot's entries of the range's kv heads are contiguous:
// reading them together streams the cache, where one kv head at a time read
// a few lines of every row of the pool.
template <typename Vec, typename T>
SEED_INLINE void attend(const PagedAttentionArgs& a, int64_t row, int64_t kv_begin, int64_t kv_end, float* scratch) {
  const int64_t group = a.heads / a.kv_heads, dim = a.dim, kv_stride = a.kv_heads * dim;
  const int64_t per_head = group * (dim + kChunk + 2), range_width = (kv_end - kv_begin) * dim;
  const int64_t n = a.rows->length(row);
  const float scale = 1.0f / std::sqrt(static_cast<float>(dim));
  for (int64_t kv_head = kv_begin; kv_head < kv_end; ++kv_head) {
    float* q = scratch + (kv_head - kv_begin) * per_head;
    const float* q_in = a.q + row * a.q_stride + kv_head * group * dim;
    for (int64_t i = 0; i < group * dim; ++i) q[i] = q_in[i] * scale;
    float* out = a.out + row * a.heads * dim + kv_head * group * dim;
    std::fill(out, out + group * dim, 0.0f);
  }
  float* wide = scratch + (kv_end - kv_begin) * per_head;  // [kChunk, dim]: widened keys or values
  const T* keys = static_cast<const T*>(a.keys) + kv_begin * dim;
  const T* values = static_cast<const T*>(a.values) + kv_begin * dim;
  int64_t slots[kChunk];
  for (int64_t first = 0; first < n; first += kChunk) {
    const int64_t c = std::min(kChunk, n - first);
    a.rows->slots(row, first, c, slots);
    // The keys and values of the chunk are asked for a few slots ahead of
    // the scores, so that the weighted sums then read them from cache.
    for (int64_t j = 0; j < std::min(c, kPrefetchAhead); ++j) {
      prefetch_row(keys + slots[j] * kv_stride, range_width);
      prefetch_row(values + slots[j] * kv_stride, range_width);
    }
    for (int64_t j = 0; j < c; ++j) {
      if (j + kPrefetchAhead < c) {
        prefetch_row(keys + slots[j + kPrefetchAhead] * kv_stride, range_width);
        prefetch_row(values + slots[j + kPrefetchAhead] * kv_stride, range_width);
      }
      for (int64_t kv = 0; kv < kv_end - kv_begin; ++kv) {
        const float* q = scratch + kv * per_head;
        float* scores = scratch + kv * per_head + group * dim;
        const float* k = widened<Vec>(keys + slots[j] * kv_stride + kv * dim, dim, wide);
        for (int64_t h = 0; h < group; ++h) scores[h * kChunk + j] = dot<Vec>(q + h * dim, k, dim);
      }
    }
    for (int64_t kv = 0; kv < kv_end - kv_begin; ++kv) {
      float* scores = scratch + kv * per_head + group * dim;
      float* top = scores + group * kChunk;
      float* sum = top + group;
      float* out = a.out + row * a.heads * dim + (kv_begin + kv) * group * dim;
      // The chunk's values of this kv head as float32 rows (bfloat16 is
      // widened once here, not once per query head), or the cache's own.
      const float* v = nullptr;
      int64_t v_stride = kv_stride;
      const int64_t* v_slots = slots;
      if constexpr (std::is_same_v<T, float>) {
        v = values + kv * dim;
      } else {
        for (int64_t j = 0; j < c; ++j) widened<Vec>(values + slots[j] * kv_stride + kv * dim, dim, wide + j * dim);
        v = wide;
        v_stride = dim;
        v_slots = kSuccessive;
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
        for (; d + 64 <= dim; d += 64) weighted_sum<Vec, 64>(p, v_slots, c, v + d, v_stride, o + d);
        for (; d + 32 <= dim; d += 32) weighted_sum<Vec, 32>(p, v_slots, c, v + d, v_stride, o + d);
        for (; d + 16 <= dim; d += 16) weighted_sum<Vec, 16>(p, v_slots, c, v + d, v_stride, o + d);
        for (int64_t j = 0; d < dim && j < c; ++j) {  // the rest of a head size that is not a multiple of 16
          for (int64_t i = d; i < dim; ++i) o[i] += p[j] * v[v_slots[j] * v_stride + i];
        }
      }
    }
  }
  for (int64_t kv = 0; kv < kv_end - kv_begin; ++kv) {
    const float* sum = scratch + kv * per_head + group * (dim + kChunk + 1);
    float* out = a.out + row * a.heads * dim + (kv_begin + kv) * group * dim;
    for (int64_t h = 0; h < group; ++h) {
      const float inv_sum = 1.0f / sum[h];
      for (int64_t i = 0; i < dim; ++i) out[h * dim + i] *= inv_sum;
    }
  }
}

// Items [begin, end): item i is row i / ranges' kv heads [r * range, (r + 1)
// * range) for r = i % ranges (the last range may be shorter).
template <typename Vec>
SEED_INLINE void attention_items(const PagedAttentionArgs& a, int64_t range, int64_t begin, int64_t end) {
  const int64_t group = a.heads / a.kv_heads, ranges = (a.kv_heads + range - 1) / range;
  std::vector<float> scratch(range * group * (a.dim + kChunk + 2) + kChunk * a.dim);
  for (int64_t item = begin; item < end; ++item) {
    const int64_t row = item / ranges, kv_begin = item % ranges * range;
    const int64_t kv_end = std::min(a.kv_heads, kv_begin + range);
    if (a.kv_dtype == KvDtype::kBFloat16) {
      attend<Vec, uint16_t>(a, row, kv_begin, kv_end, scratch.data());
    } else {
      attend<Vec, float>(a, row, kv_begin, kv_end, scratch.data());
    }
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

__attribute__((target("avx512f"))) void attention_avx512(const PagedAttentionArgs& a, int64_t range, int64_t begin,
                                                          int64_t end) {
  attention_items<Zmm>(a, range, begin, end);
}
__attribute__((target("avx2,fma"))) void attention_avx2(const PagedAttentionArgs& a, int64_t range, int64_t begin,
                                                       int64_t end) {
  attention_items<Ymm>(a, range, begin, end);
}
void attention_portable(const PagedAttentionArgs& a, int64_t range, int64_t begin, int64_t end) {
  attention_items<Xmm>(a, range, begin, end);
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
  const int64_t rows = args.rows->count();
  if (rows == 0) return;
  // Each row's kv heads in as few equal ranges as still share the items
  // evenly over the threads (a decode step's one row: one range per
  // thread). A head's result is the same whichever range computes it.
  const int64_t threads = at::get_num_threads();
  int64_t ranges = 1;
  while (ranges < args.kv_heads &&
         (args.kv_heads % ranges != 0 || (rows * ranges % threads != 0 && rows * ranges < 4 * threads))) {
    ++ranges;
  }
  const int64_t range = args.kv_heads / ranges, items = rows * ranges;
  // Each item reads its slots' keys and values once per query head.
  const int64_t flops_per_item =
      std::max<int64_t>(1, 4 * args.dim * range * (args.heads / args.kv_heads) * args.rows->total_length() / rows);
  const int64_t grain = std::max<int64_t>(1, kMinFlopsPerThread / flops_per_item);
  at::parallel_for(0, items, grain, [&](int64_t begin, int64_t end) {
    switch (kernel) {
      case CpuKernel::kAvx512: return attention_avx512(args, range, begin, end);
      case CpuKernel::kAvx2: return attention_avx2(args, range, begin, end);
      case CpuKernel::kPortable: return attention_portable(args, range, begin, end);
    }
  });
}

void store_kv_row(KvDtype dtype, const float* row, int64_t n, void* out) {
  if (dtype == KvDtype::kFloat32) {
    std::memcpy(out, row, n * sizeof(float));
    return;
  }
  auto* bits = static_cast<c10::BFloat16*>(out);
  for (int64_t i = 0; i < n; ++i) bits[i] = c10::BFloat16(row[i]);  // to nearest even
}

void silu_mul(CpuKernel kernel, float* gate, const float* up, int64_t n) {
  switch (kernel) {
    case CpuKernel::kAvx512: return silu_mul_avx512(gate, up, n);
    case CpuKernel::kAvx2: return silu_mul_avx2(gate, up, n);
    case CpuKernel::kPortable: return silu_mul_portable(gate, up, n);
  }
}

}  // namespace seed::models
