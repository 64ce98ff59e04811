#include "models/cpu_layer_kernels.h"

#include <ATen/Parallel.h>
#include <c10/util/BFloat16.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <type_traits>

#include "models/base/exp_nonpositive.h"
#include "models/cpu_attention_tiles.h"
#include "models/cpu_vector_math.h"
#include "models/cpu_vector_sums.h"

namespace seed::models {
namespace {

constexpr int64_t kMinFlopsPerThread = int64_t{1} << 17;

// Attended entries per step of the online softmax: the scratch a row needs
// is this many scores per query head, whatever the context.
constexpr int64_t kChunk = 64;

// Most rows attended together: enough to read a verified chain's or a small
// tree's prefix once, few enough that their scratch stays in the caches.
constexpr int64_t kGroupRows = 16;

// A kv head's rows of successive slots are a row of the pool apart (kv_heads
// x dim entries), and a block's slots sit anywhere in the pool, so the
// hardware prefetchers, which stop at page boundaries, see every key or
// value row on a page of its own: without a hint each waits for memory in
// turn, and a long context's attention ran at a third of the memory
// bandwidth. So the next chunk's rows are asked for while this one is
// computed.
template <typename T>
SEED_INLINE void prefetch_row(const T* p, int64_t n) {
  constexpr int64_t kPerLine = 64 / sizeof(T);
  for (int64_t i = 0; i < n; i += kPerLine) __builtin_prefetch(p + i, /*rw=*/0, /*locality=*/1);
}

// Query rows [row_begin, row_end) against the kv heads [kv_begin,
// kv_end), each kv head with the `group` query heads that read it. The rows
// share one block table, so the whole chunks inside every row's prefix are
// the same entries for all of them: those are read once for the rows
// together (a verified chain's or tree's rows, a prefill's), then each row
// reads the rest of its entries alone. Every row is cut into the same
// chunks from its first entry either way, so its result is the same bits
// as if it were attended alone.
//
// A chunk's readers (its rows' query heads, row by row) go through it in
// tiles of kTile: each key and value row is read from the cache and widened
// once per tile, its products with the tile's queries or weights summed in
// registers. Per row and kv head, scratch holds the query heads' scaled
// queries [group, dim], one chunk's scores [group, kChunk], and each head's
// running maximum and sum [group] each. The output rows accumulate the
// weighted values, rescaled whenever a chunk raises a head's maximum. While
// a chunk is computed, the next one's keys and values are asked for.
template <typename Vec, typename T>
class RowsAttention {
 public:
  RowsAttention(const PagedAttentionArgs& a, int64_t row_begin, int64_t row_end, int64_t kv_begin, int64_t kv_end,
                float* scratch)
      : a_(a),
        row_begin_(row_begin),
        row_end_(row_end),
        kv_begin_(kv_begin),
        kv_count_(kv_end - kv_begin),
        group_(a.heads / a.kv_heads),
        dim_(a.dim),
        kv_stride_(a.kv_heads * a.dim),
        per_head_(group_ * (dim_ + kChunk + 2)),
        scratch_(scratch),
        row_copy_(scratch + (row_end - row_begin) * kv_count_ * per_head_),
        keys_(static_cast<const T*>(a.keys) + kv_begin * a.dim),
        values_(static_cast<const T*>(a.values) + kv_begin * a.dim) {}

  static int64_t scratch_size(int64_t rows, int64_t kv_count, int64_t group, int64_t dim) {
    return rows * kv_count * group * (dim + kChunk + 2) + dim;
  }

  SEED_INLINE void run() {
    const float scale = 1.0f / std::sqrt(static_cast<float>(dim_));
    int64_t shared = a_.rows->prefix[row_begin_];
    for (int64_t row = row_begin_; row < row_end_; ++row) {
      shared = std::min(shared, a_.rows->prefix[row]);
      for (int64_t kv = 0; kv < kv_count_; ++kv) {
        float* q = state(row, kv);
        const float* q_in = a_.q + row * a_.q_stride + (kv_begin_ + kv) * group_ * dim_;
        for (int64_t h = 0; h < group_; ++h) {
          reorder<true>(q_in + h * dim_, scale, q + h * dim_);
        }
        float* o = out(row, kv);
        std::fill(o, o + group_ * dim_, 0.0f);
      }
    }
    shared = shared / kChunk * kChunk;
    if (shared > 0) chunks(row_begin_, row_end_, 0, shared);
    for (int64_t row = row_begin_; row < row_end_; ++row) chunks(row, row + 1, shared, a_.rows->length(row));
    for (int64_t row = row_begin_; row < row_end_; ++row) {
      for (int64_t kv = 0; kv < kv_count_; ++kv) {
        const float* sum = state(row, kv) + group_ * (dim_ + kChunk + 1);
        float* o = out(row, kv);
        for (int64_t h = 0; h < group_; ++h) {
          const float inv_sum = 1.0f / sum[h];
          float* head = o + h * dim_;
          std::copy(head, head + dim_, row_copy_);
          reorder<false>(row_copy_, inv_sum, head);
        }
      }
    }
  }

 private:
  // Row `row`'s scratch for kv head kv_begin + kv: queries, scores, maxima, sums.
  float* state(int64_t row, int64_t kv) const { return scratch_ + ((row - row_begin_) * kv_count_ + kv) * per_head_; }
  float* out(int64_t row, int64_t kv) const { return a_.out + row * a_.heads * dim_ + (kv_begin_ + kv) * group_ * dim_; }
  // The entry at position i of a query or output row as the cache's rows are read.
  int64_t entry(int64_t i) const { return std::is_same_v<T, float> ? i : in_lane_order<Vec>(i, dim_); }

  // A chunk's reader i of kv head kv_begin + kv, counted from row first_row:
  // its row's query head i % group.
  Reader reader(int64_t first_row, int64_t kv, int64_t i) const {
    const int64_t row = first_row + i / group_, h = i % group_;
    float* s = state(row, kv);
    return {s + h * dim_, s + group_ * dim_ + h * kChunk, s + group_ * (dim_ + kChunk) + h,
            s + group_ * (dim_ + kChunk + 1) + h, out(row, kv) + h * dim_};
  }

  // out = scale * a row in the order the cache's rows are read (`into`:
  // from its own order into that one; otherwise back).
  template <bool into>
  SEED_INLINE void reorder(const float* __restrict in, float scale, float* __restrict out) const {
    constexpr int64_t L = kLanesOf<Vec>;
    int64_t i = 0;
    if constexpr (std::is_same_v<T, uint16_t>) {
      for (; i + 2 * L <= dim_; i += 2 * L) {
        for (int64_t r = 0; r < L; ++r) {
          (into ? out[i + r] : out[i + 2 * r]) = scale * (into ? in[i + 2 * r] : in[i + r]);
          (into ? out[i + L + r] : out[i + 2 * r + 1]) = scale * (into ? in[i + 2 * r + 1] : in[i + L + r]);
        }
      }
    }
    for (; i < dim_; ++i) out[i] = scale * in[i];
  }

  // Entries [from, to) of rows [first_row, last_row), which attend to the
  // same slots there (the slots are read from the first).
  SEED_INLINE void chunks(int64_t first_row, int64_t last_row, int64_t from, int64_t to) {
    if (from >= to) return;
    int64_t slots[kChunk], next_slots[kChunk];
    a_.rows->slots(first_row, from, std::min(kChunk, to - from), slots);
    const int64_t range_width = kv_count_ * dim_;
    for (int64_t j = 0; j < std::min(kChunk, to - from); ++j) {
      prefetch_row(keys_ + slots[j] * kv_stride_, range_width);
      prefetch_row(values_ + slots[j] * kv_stride_, range_width);
    }
    for (int64_t first = from; first < to; first += kChunk) {
      const int64_t c = std::min(kChunk, to - first), next_c = std::min(kChunk, to - first - c);
      if (next_c > 0) a_.rows->slots(first_row, first + c, next_c, next_slots);
      for (int64_t kv = 0; kv < kv_count_; ++kv) chunk(first_row, last_row, kv, slots, c, first == 0, next_slots, next_c);
      std::copy(next_slots, next_slots + std::max<int64_t>(next_c, 0), slots);
    }
  }

  // One chunk of c entries (at `slots`) of kv head kv_begin + kv for rows
  // [first_row, last_row); `opening`: the rows' first chunk.
  SEED_INLINE void chunk(int64_t first_row, int64_t last_row, int64_t kv, const int64_t* slots, int64_t c,
                         bool opening, const int64_t* next_slots, int64_t next_c) {
    constexpr int64_t R = kTile<Vec>;
    const T* keys = keys_ + kv * dim_;
    const T* values = values_ + kv * dim_;
    const T* key_rows[kChunk];
    for (int64_t j = 0; j < c; ++j) key_rows[j] = keys + slots[j] * kv_stride_;
    for (int64_t j = c; j < kChunk && j % (kLanesOf<Vec> / R) != 0; ++j) key_rows[j] = key_rows[0];  // scores never used
    // The next chunk's rows [j, j + n) of this kv head, asked for as the first tile reads this one's.
    const auto ask_next = [&](int64_t j, int64_t n) {
      for (int64_t i = j; i < std::min(j + n, next_c); ++i) {
        prefetch_row(keys + next_slots[i] * kv_stride_, dim_);
        prefetch_row(values + next_slots[i] * kv_stride_, dim_);
      }
    };
    for_each_tile(first_row, last_row, kv, [&](const auto& tile, bool first) SEED_INLINE_LAMBDA {
      constexpr int64_t size = std::tuple_size_v<std::decay_t<decltype(tile)>>;
      if (first) {
        tile_scores<Vec, size>(tile.data(), key_rows, c, dim_, ask_next);
      } else {
        tile_scores<Vec, size>(tile.data(), key_rows, c, dim_, [](int64_t, int64_t) {});
      }
    });
    for (int64_t i = 0; i < (last_row - first_row) * group_; ++i) softmax_step(reader(first_row, kv, i), c, opening);
    for_each_tile(first_row, last_row, kv, [&](const auto& tile, bool) SEED_INLINE_LAMBDA {
      weigh<std::tuple_size_v<std::decay_t<decltype(tile)>>>(tile.data(), c, values, slots);
    });
  }

  // Calls f(tile, first) for the readers of rows [first_row, last_row) and
  // kv head kv_begin + kv in tiles of kTile, row by row, each tile a
  // std::array of Readers; `first` for the first tile.
  template <typename F>
  SEED_INLINE void for_each_tile(int64_t first_row, int64_t last_row, int64_t kv, F&& f) const {
    constexpr int64_t R = kTile<Vec>;
    const int64_t readers = (last_row - first_row) * group_;
    for (int64_t t = 0; t < readers; t += R) {
      with_tile_size<R>(readers - t, [&](auto size) SEED_INLINE_LAMBDA {
        std::array<Reader, decltype(size)::value> tile;
        for (int64_t r = 0; r < decltype(size)::value; ++r) tile[r] = reader(first_row, kv, t + r);
        f(tile, t == 0);
      });
    }
  }

  // The online softmax's step over a reader's scores of c entries: they
  // become its weights, and its output row is rescaled to its new maximum.
  SEED_INLINE void softmax_step(const Reader& one, int64_t c, bool opening) const {
    const float chunk_top = max_of<Vec>(one.scores, c);
    if (opening) {
      *one.top = chunk_top;
      *one.sum = exp_sum(one.scores, c, chunk_top);
      return;
    }
    const float new_top = std::max(*one.top, chunk_top);
    const float rescale = exp_nonpositive(*one.top - new_top);
    *one.top = new_top;
    *one.sum = fused(*one.sum, rescale, exp_sum(one.scores, c, new_top));
    if (rescale != 1.0f) {
      for (int64_t i = 0; i < dim_; ++i) one.out[i] *= rescale;
    }
  }

  // A tile's weights of c entries times their value rows (at `slots`, in
  // lane order) added to its output rows.
  template <int64_t R>
  SEED_INLINE void weigh(const Reader* tile, int64_t c, const T* values, const int64_t* slots) const {
    const auto step = [&](auto width, int64_t d) SEED_INLINE_LAMBDA {
      tile_weighted_sum<Vec, decltype(width)::value, R>(tile, d, slots, c, values + d, kv_stride_);
    };
    int64_t d = 0;
    if constexpr (kWidest<Vec> >= 64) {
      for (; d + 64 <= dim_; d += 64) step(std::integral_constant<int64_t, 64>(), d);
    }
    if constexpr (kWidest<Vec> >= 32) {
      for (; d + 32 <= dim_; d += 32) step(std::integral_constant<int64_t, 32>(), d);
    }
    for (; d + 16 <= dim_; d += 16) step(std::integral_constant<int64_t, 16>(), d);
    for (int64_t r = 0; r < R; ++r) {  // the rest of a head size that is not a multiple of 16
      float* o = tile[r].out;
      for (int64_t j = 0; d < dim_ && j < c; ++j) {
        const T* v = values + slots[j] * kv_stride_;
        for (int64_t i = d; i < dim_; ++i) o[i] = fused(tile[r].scores[j], widen(v[entry(i)]), o[i]);
      }
    }
  }

  const PagedAttentionArgs& a_;
  const int64_t row_begin_, row_end_, kv_begin_, kv_count_, group_, dim_, kv_stride_, per_head_;
  float* const scratch_;
  float* const row_copy_;  // [dim]: an output row while it is put back in order
  const T* const keys_;
  const T* const values_;
};
// Items [begin, end): item i is row group i / ranges's kv heads [r * range,
// (r + 1) * range) for r = i % ranges (the last range may be shorter).
template <typename Vec>
SEED_INLINE void attention_items(const PagedAttentionArgs& a, const std::vector<int64_t>& groups, int64_t range,
                                 int64_t begin, int64_t end) {
  const int64_t group = a.heads / a.kv_heads, ranges = (a.kv_heads + range - 1) / range;
  int64_t most_rows = 0;
  for (size_t g = 0; g + 1 < groups.size(); ++g) most_rows = std::max(most_rows, groups[g + 1] - groups[g]);
  std::vector<float> scratch(RowsAttention<Vec, float>::scratch_size(most_rows, range, group, a.dim));
  for (int64_t item = begin; item < end; ++item) {
    const int64_t g = item / ranges, kv_begin = item % ranges * range;
    const int64_t kv_end = std::min(a.kv_heads, kv_begin + range);
    if (a.kv_dtype == KvDtype::kBFloat16) {
      RowsAttention<Vec, uint16_t>(a, groups[g], groups[g + 1], kv_begin, kv_end, scratch.data()).run();
    } else {
      RowsAttention<Vec, float>(a, groups[g], groups[g + 1], kv_begin, kv_end, scratch.data()).run();
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

__attribute__((target("avx512f"))) void attention_avx512(const PagedAttentionArgs& a,
                                                          const std::vector<int64_t>& groups, int64_t range,
                                                          int64_t begin, int64_t end) {
  attention_items<Zmm>(a, groups, range, begin, end);
}
__attribute__((target("avx2,fma"))) void attention_avx2(const PagedAttentionArgs& a, const std::vector<int64_t>& groups,
                                                       int64_t range, int64_t begin, int64_t end) {
  attention_items<Ymm>(a, groups, range, begin, end);
}
void attention_portable(const PagedAttentionArgs& a, const std::vector<int64_t>& groups, int64_t range, int64_t begin,
                        int64_t end) {
  attention_items<Xmm>(a, groups, range, begin, end);
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
  const int64_t threads = at::get_num_threads();
  // Successive rows of one block table in groups (their shared prefix read
  // once for all of them), of at most kGroupRows rows, and fewer where that
  // would leave threads without work.
  const int64_t most = std::clamp<int64_t>(rows * args.kv_heads / threads, 1, kGroupRows);
  std::vector<int64_t> groups{0};
  for (int64_t r = 1; r <= rows; ++r) {
    if (r == rows || args.rows->tables[r] != args.rows->tables[r - 1] || r - groups.back() == most) {
      groups.push_back(r);
    }
  }
  const int64_t count = static_cast<int64_t>(groups.size()) - 1;
  // Each group's kv heads in as few equal ranges as still share the items
  // evenly over the threads (a decode step's one row: one range per
  // thread). A head's result is the same whichever range computes it.
  int64_t ranges = 1;
  while (ranges < args.kv_heads &&
         (args.kv_heads % ranges != 0 || (count * ranges % threads != 0 && count * ranges < 4 * threads))) {
    ++ranges;
  }
  const int64_t range = args.kv_heads / ranges, items = count * ranges;
  // Each item reads its groups' keys and values once per query head and row.
  const int64_t flops_per_item =
      std::max<int64_t>(1, 4 * args.dim * range * (args.heads / args.kv_heads) * args.rows->total_length() / count);
  const int64_t grain = std::max<int64_t>(1, kMinFlopsPerThread / flops_per_item);
  at::parallel_for(0, items, grain, [&](int64_t begin, int64_t end) {
    switch (kernel) {
      case CpuKernel::kAmx:
      case CpuKernel::kAvx512Bf16:
      case CpuKernel::kAvx512: return attention_avx512(args, groups, range, begin, end);
      case CpuKernel::kAvx2: return attention_avx2(args, groups, range, begin, end);
      case CpuKernel::kPortable: return attention_portable(args, groups, range, begin, end);
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
    case CpuKernel::kAmx:
    case CpuKernel::kAvx512Bf16:
    case CpuKernel::kAvx512: return silu_mul_avx512(gate, up, n);
    case CpuKernel::kAvx2: return silu_mul_avx2(gate, up, n);
    case CpuKernel::kPortable: return silu_mul_portable(gate, up, n);
  }
}

}  // namespace seed::models
