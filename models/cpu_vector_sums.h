// Sums and maxima of floats for the CPU layer kernels, each in an order
// fixed by the count of its inputs alone: 16 partial sums folded in a
// fixed tree, a softmax step's exponentials summed, the horizontal sums of
// a vector's worth of dot products at once, and a row's maximum. Built on
// cpu_vector_math.h, with its options. Internal to models/, included by
// cpu_layer_kernels.cpp alone; stateless.
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>

#include "models/base/exp_nonpositive.h"
#include "models/cpu_vector_math.h"

namespace seed::models {
// Unnamed, though in a header: cpu_layer_kernels.cpp alone includes it, and
// with external linkage here GCC inlined the kernels differently.
namespace {

// Partial sums per reduction: one zmm, two ymm or four xmm, so that the
// compiler vectorises the sums without reordering them.
constexpr int64_t kLanes = 16;

// Sums 16 partial sums in a fixed tree (halves added lane-wise), so that the
// reduction is a few vector adds rather than sixteen dependent scalar ones.
SEED_INLINE float fold(float (&part)[kLanes]) {
  for (int64_t t = 0; t < 8; ++t) part[t] += part[t + 8];
  for (int64_t t = 0; t < 4; ++t) part[t] += part[t + 4];
  return (part[0] + part[2]) + (part[1] + part[3]);
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

}  // namespace
}  // namespace seed::models
