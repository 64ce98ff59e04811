// Vectors of floats for the CPU layer kernels (cpu_layer_kernels.cpp): one
// type per instruction set's register width, and what the kernels do with
// them: a broadcast, a multiply-add rounded once, and loads of float32 rows
// and of bfloat16 rows widened (whole blocks in lane order). The bodies are
// generic and always inlined into the functions built per instruction set,
// under cpu_layer_kernels.cpp's options (models/CMakeLists.txt). Internal
// to models/, included by cpu_layer_kernels.cpp alone; stateless.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>

// load<Vec> returns vectors wider than the baseline ISA's registers; it is
// only ever inlined into functions built for an ISA that has them.
#pragma GCC diagnostic ignored "-Wpsabi"

// The kernels' bodies are written once and inlined into one function per
// instruction set (the target attributes at the end of cpu_layer_kernels.cpp),
// which the compiler vectorises for that set.
#define SEED_INLINE inline __attribute__((always_inline))
// The same for a lambda, which does not take its caller's instruction set.
#define SEED_INLINE_LAMBDA __attribute__((always_inline))

namespace seed::models {
// Unnamed, though in a header: cpu_layer_kernels.cpp alone includes it, and
// with external linkage here GCC inlined the kernels differently.
namespace {

// A cached key or value entry as float32: itself, or a bfloat16's bits
// widened (exactly: bfloat16 is float32's upper half).
SEED_INLINE float widen(float x) { return x; }
SEED_INLINE float widen(uint16_t bits) {
  const uint32_t word = static_cast<uint32_t>(bits) << 16;
  float x;
  std::memcpy(&x, &word, sizeof x);
  return x;
}

// a * b + c rounded once. The kernels are built without floating-point
// contraction (models/CMakeLists.txt), so that a row's bits do not depend
// on which inlined copy of a loop computed it; the products and sums fused
// on purpose are spelled out.
SEED_INLINE float fused(float a, float b, float c) { return __builtin_fmaf(a, b, c); }

// Vectors of floats as values (a GCC vector extension), one per instruction
// set's register width: each of the kernels' instantiations keeps its sums
// in registers.
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

}  // namespace
}  // namespace seed::models
