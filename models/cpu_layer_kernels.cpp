#include "models/cpu_layer_kernels.h"

#include <ATen/Parallel.h>
#include <c10/util/BFloat16.h>
#include <immintrin.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <type_traits>
#include <utility>

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
// The same for a lambda, which does not take its caller's instruction set.
#define SEED_INLINE_LAMBDA __attribute__((always_inline))

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

// a * b + c rounded once. This file is built without floating-point
// contraction (models/CMakeLists.txt), so that a row's bits do not depend
// on which inlined copy of a loop computed it; the products and sums fused
// on purpose are spelled out.
SEED_INLINE float fused(float a, float b, float c) { return __builtin_fmaf(a, b, c); }

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

// splat<Vec>(x): x in every lane. fused(a, b, c): a * b + c lane by lane,
// rounded once where the instruction set has a fused multiply-add; SSE2
// has none, and clang checks a builtin's instruction set where it is
// written (these bodies are generic), so those get a multiply and an add.
template <typename Vec>
SEED_INLINE Vec splat(float x) noexcept {
  return x - Vec{};  // exact for every x, -0 included
}
template <typename Vec>
SEED_INLINE Vec fused(Vec a, Vec b, Vec c) noexcept {
  return a * b + c;
}
#if !defined(__clang__)
// With GCC, the instruction set's builtins, which keep a tile's sums in
// registers. A scalar converted to a vector wider than the default
// instruction set's came out lane by lane as masked inserts (these bodies
// are compiled for the default set before they are inlined into wider
// ones); a broadcast that reads memory, and a builtin that GCC takes for a
// call that may throw (hence noexcept), kept the sums in memory around it.
template <>
SEED_INLINE Zmm splat<Zmm>(float x) noexcept {
  return __builtin_ia32_broadcastss512(Xmm{x}, Zmm{}, -1);
}
template <>
SEED_INLINE Ymm splat<Ymm>(float x) noexcept {
  return __builtin_ia32_vbroadcastss_ps256(Xmm{x});
}
SEED_INLINE Zmm fused(Zmm a, Zmm b, Zmm c) noexcept {
  return __builtin_ia32_vfmaddps512_mask(a, b, c, -1, _MM_FROUND_CUR_DIRECTION);
}
SEED_INLINE Ymm fused(Ymm a, Ymm b, Ymm c) noexcept { return __builtin_ia32_vfmaddps256(a, b, c); }
#endif

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

// A vector of L 32-bit words holds 2L bfloat16 entries, and each word's
// low half shifted out or masked off gives the floats of the even entries
// or of the odd ones in one instruction. So a bfloat16 row is widened in
// lane order: each whole block of 2L entries as its even entries, then its
// odd ones, and the rest as it is. Queries are put in the same order, so a
// score is the same dot product, and output rows accumulate in that order
// and are put back at the end. Position i of a row in lane order holds
// entry in_lane_order(i).
template <typename Vec>
constexpr int64_t in_lane_order(int64_t i, int64_t dim) {
  constexpr int64_t block = 2 * kLanesOf<Vec>;
  if (i >= dim / block * block) return i;
  const int64_t r = i % block;
  return i - r + (r < block / 2 ? 2 * r : 2 * (r - block / 2) + 1);
}

// Entries [0, 2L) of a cached row as two float vectors: a float32 row's as
// they are, a bfloat16 row's in lane order.
template <typename Vec>
SEED_INLINE void load_block(const float* p, Vec& first, Vec& second) {
  first = load<Vec>(p);
  second = load<Vec>(p + kLanesOf<Vec>);
}
template <typename Vec>
SEED_INLINE void load_block(const uint16_t* p, Vec& first, Vec& second) {
  using Word = typename BitsOf<Vec>::Word;
  Word words;
  std::memcpy(&words, p, sizeof words);
  const Word even = words << 16, odd = words & 0xffff0000u;
  std::memcpy(&first, &even, sizeof first);
  std::memcpy(&second, &odd, sizeof second);
}

// Lane i of pair_sum(x, y): with x and y cut into blocks of B lanes, the
// result holds x_{2m} + x_{2m+1} and then y_{2m} + y_{2m+1} for m = 0, 1,
// ...: each input's partial sums halve in number. Lane indices of x then y,
// as __builtin_shufflevector numbers them.
constexpr int pair_lane(int lanes, int B, int i, int half) {
  const int m = i / (2 * B), within = i % (2 * B);
  return within < B ? (2 * m + half) * B + within : lanes + (2 * m + half) * B + within - B;
}
template <typename Vec, int B, int... I>
SEED_INLINE Vec pair_sum(Vec x, Vec y, std::integer_sequence<int, I...>) {
  constexpr int L = sizeof(Vec) / sizeof(float);
  return __builtin_shufflevector(x, y, pair_lane(L, B, I, 0)...) +
         __builtin_shufflevector(x, y, pair_lane(L, B, I, 1)...);
}
template <typename Vec, int B>
SEED_INLINE void fold_pairs(Vec* v) {  // 2B vectors -> B
  for (int i = 0; i < B; ++i) {
    v[i] = pair_sum<Vec, B>(v[2 * i], v[2 * i + 1], std::make_integer_sequence<int, sizeof(Vec) / sizeof(float)>());
  }
  if constexpr (B > 1) fold_pairs<Vec, B / 2>(v);
}
constexpr int bit_reversed(int i, int bits) {
  int r = 0;
  for (int b = 0; b < bits; ++b) r |= ((i >> b) & 1) << (bits - 1 - b);
  return r;
}

// Lane i of the result is the sum of the lanes of v[i], for as many vectors
// as a vector has lanes: the horizontal sums of L dot products in 2 log2(L)
// shuffles and log2(L) adds per pair of levels, where one vector at a time
// took log2(L) dependent shuffles and adds each. The levels leave the sums
// in bit-reversed order, so the inputs go in in that order. The tree is
// fixed: a lane's sum depends on its vector alone.
template <typename Vec>
SEED_INLINE Vec lane_sums(const Vec* v) {
  constexpr int L = sizeof(Vec) / sizeof(float);
  constexpr int bits = L == 16 ? 4 : L == 8 ? 3 : 2;
  Vec work[L];
  for (int i = 0; i < L; ++i) work[i] = v[bit_reversed(i, bits)];
  fold_pairs<Vec, L / 2>(work);
  return work[0];
}

// One query head of one row, as attention reads and writes it: its scaled
// query and its output row (both in the order the cache's rows are read),
// one chunk's scores (then weights), and its running maximum and sum.
struct Reader {
  const float* q;
  float* scores;  // [kChunk]
  float* top;
  float* sum;
  float* out;
};

// Readers of a chunk (its rows' query heads) that go through it together:
// each key and value row is read and widened once for them, and their sums
// stay in registers beside it. As many as the registers hold (32 zmm; 16
// ymm or xmm).
template <typename Vec>
constexpr int64_t kTile = kLanesOf<Vec> == 16 ? 4 : 2;

// Calls f(std::integral_constant<int64_t, n>) for 1 <= n <= R, so that a
// tile's loops over its readers are unrolled for its size.
template <int64_t R, typename F>
SEED_INLINE void with_tile_size(int64_t n, F&& f) {
  if constexpr (R > 1) {
    if (n < R) return with_tile_size<R - 1>(n, f);
  }
  f(std::integral_constant<int64_t, R>());
}

// tile[r].scores[j] = tile[r].q . keys[j] over dim entries for the R
// readers of a tile and j < c, and whatever in [c, the next multiple of
// L / kTile) (keys[j] must be readable there); the keys float32 rows or
// bfloat16 ones in lane order. L / kTile keys at a time, each loaded once for the tile: every
// reader's products summed lane-wise, then across lanes together. A score's
// sums are the same operations in the same order whatever its tile, so a
// reader's scores are the same bits in any tile. before(j, n) is called
// before keys [j, j + n) are read.
template <typename Vec, int64_t R, typename T, typename Before>
SEED_INLINE void tile_scores(const Reader* tile, const T* const* keys, int64_t c, int64_t dim, Before before) {
  constexpr int64_t L = kLanesOf<Vec>, J = L / kTile<Vec>;
  const float* q[R];
  float* scores[R];
  for (int64_t r = 0; r < R; ++r) {
    q[r] = tile[r].q;
    scores[r] = tile[r].scores;
  }
  const int64_t blocks = dim / (2 * L) * (2 * L), whole = dim / L * L;
  for (int64_t j0 = 0; j0 < c; j0 += J) {
    before(j0, J);
    Vec acc[L] = {};  // reader r's score of key j0 + j in acc[r * J + j]
    for (int64_t d = 0; d < blocks; d += 2 * L) {
      Vec q0[R], q1[R];
      for (int64_t r = 0; r < R; ++r) {
        q0[r] = load<Vec>(q[r] + d);
        q1[r] = load<Vec>(q[r] + d + L);
      }
      for (int64_t j = 0; j < J; ++j) {
        Vec k0, k1;
        load_block(keys[j0 + j] + d, k0, k1);
        for (int64_t r = 0; r < R; ++r) {
          acc[r * J + j] = fused(q0[r], k0, acc[r * J + j]);
          acc[r * J + j] = fused(q1[r], k1, acc[r * J + j]);
        }
      }
    }
    if (whole > blocks) {  // a last L entries, in order
      Vec qd[R];
      for (int64_t r = 0; r < R; ++r) qd[r] = load<Vec>(q[r] + blocks);
      for (int64_t j = 0; j < J; ++j) {
        const Vec k = load<Vec>(keys[j0 + j] + blocks);
        for (int64_t r = 0; r < R; ++r) acc[r * J + j] = fused(qd[r], k, acc[r * J + j]);
      }
    }
    const Vec sums = lane_sums(acc);
    for (int64_t r = 0; r < R; ++r) {
      for (int64_t j = 0; j < J; ++j) scores[r][j0 + j] = sums[r * J + j];
    }
    for (int64_t d = whole; d < dim; ++d) {  // a head size that is not a multiple of the lanes
      for (int64_t j = 0; j < J; ++j) {
        const float k = widen(keys[j0 + j][d]);
        for (int64_t r = 0; r < R; ++r) scores[r][j0 + j] = fused(q[r][d], k, scores[r][j0 + j]);
      }
    }
  }
}

// max of s[0, n), n >= 1.
template <typename Vec>
SEED_INLINE float max_of(const float* s, int64_t n) {
  constexpr int64_t L = kLanesOf<Vec>;
  float top = s[0];
  int64_t j = 0;
  if (n >= L) {
    Vec m = load<Vec>(s);
    for (j = L; j + L <= n; j += L) {
      const Vec v = load<Vec>(s + j);
      m = m > v ? m : v;
    }
    for (int64_t i = 0; i < L; ++i) top = std::max(top, m[i]);
  }
  for (; j < n; ++j) top = std::max(top, s[j]);
  return top;
}

// out[d, d + W) += sum over j of p[j] * (values + slots[j] * stride)[0, W)
// for each of the R readers of a tile (p its scores, out its output row), W
// a multiple of 16, the values float32
// rows or bfloat16 ones in lane order (W is whole blocks of 2L entries
// there, or a last L in order). Each value row is loaded once for the tile.
// The sums stay in registers across positions; written as plain loops, the
// compiler kept them in memory and chained every position's add through a
// store and a reload. An output entry's sum is the same operations in the
// same order whatever its tile and W.
template <typename Vec, int64_t W, int64_t R, typename T>
SEED_INLINE void tile_weighted_sum(const Reader* tile, int64_t d, const int64_t* slots, int64_t n,
                                   const T* __restrict values, int64_t stride) {
  constexpr int64_t kVectors = W / kLanesOf<Vec>;
  const float* p[R];
  float* out[R];
  for (int64_t r = 0; r < R; ++r) {
    p[r] = tile[r].scores;
    out[r] = tile[r].out + d;
  }
  Vec acc[R][kVectors];
  for (int64_t r = 0; r < R; ++r) std::memcpy(acc[r], out[r], sizeof acc[r]);
  for (int64_t j = 0; j < n; ++j) {
    const T* v = values + slots[j] * stride;
    if constexpr (kVectors == 1) {  // a last L entries, in order
      const Vec x = load<Vec>(v);
      for (int64_t r = 0; r < R; ++r) acc[r][0] = fused(splat<Vec>(p[r][j]), x, acc[r][0]);
    } else {
      for (int64_t i = 0; i < kVectors; i += 2) {
        Vec first, second;
        load_block(v + kLanesOf<Vec> * i, first, second);
        for (int64_t r = 0; r < R; ++r) {
          const Vec weight = splat<Vec>(p[r][j]);
          acc[r][i] = fused(weight, first, acc[r][i]);
          acc[r][i + 1] = fused(weight, second, acc[r][i + 1]);
        }
      }
    }
  }
  for (int64_t r = 0; r < R; ++r) std::memcpy(out[r], acc[r], sizeof acc[r]);
}

// Output entries per step of tile_weighted_sum: as many as a tile's sums
// keep in registers (32 zmm, 16 ymm or xmm).
template <typename Vec>
constexpr int64_t kWidest = kLanesOf<Vec> == 16 ? 64 : kLanesOf<Vec> == 8 ? 32 : 16;

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
    case CpuKernel::kAvx512: return silu_mul_avx512(gate, up, n);
    case CpuKernel::kAvx2: return silu_mul_avx2(gate, up, n);
    case CpuKernel::kPortable: return silu_mul_portable(gate, up, n);
  }
}

}  // namespace seed::models
