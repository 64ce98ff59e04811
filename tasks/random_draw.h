// Portable random draws for generated task data.
//
// Corpora must be identical for the same seed on every machine, or a model
// trained elsewhere would not be reproducible from its recipe.
// std::mt19937_64's output sequence is fixed by the standard, but
// std::uniform_int_distribution and std::shuffle are implementation-defined,
// so libstdc++ and libc++ would generate different corpora. These helpers
// derive every draw from the raw engine output instead. Stateless; the
// caller owns (and seeds) the engine.
#pragma once

#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include "models/base/error.h"

namespace seed::tasks {

// Uniform in [0, n), n >= 1, by rejection (no modulo bias).
inline uint64_t draw_below(std::mt19937_64& rng, uint64_t n) {
  SEED_CHECK(n >= 1, kInvalidArgument) << "draw_below: empty range";
  const uint64_t limit = UINT64_MAX - UINT64_MAX % n;  // a multiple of n
  uint64_t x = rng();
  while (x >= limit) x = rng();
  return x % n;
}

// Uniform integer in [lo, hi], lo <= hi.
inline int64_t draw_between(std::mt19937_64& rng, int64_t lo, int64_t hi) {
  SEED_CHECK(lo <= hi, kInvalidArgument) << "draw_between: lo " << lo << " > hi " << hi;
  return lo + static_cast<int64_t>(draw_below(rng, static_cast<uint64_t>(hi - lo) + 1));
}

// True with probability num / den.
inline bool draw_chance(std::mt19937_64& rng, uint64_t num, uint64_t den) {
  return draw_below(rng, den) < num;
}

// Fisher-Yates shuffle.
template <typename T>
void draw_shuffle(std::mt19937_64& rng, std::vector<T>* items) {
  for (size_t i = items->size(); i > 1; --i) {
    std::swap((*items)[i - 1], (*items)[draw_below(rng, i)]);
  }
}

// An independent engine for stream `stream` of `seed` (SplitMix64 mixing), so
// that each part of a corpus draws from its own sequence and changing one
// part's size leaves the others unchanged.
inline std::mt19937_64 derive_engine(uint64_t seed, uint64_t stream) {
  uint64_t z = seed + 0x9E3779B97F4A7C15ull * (stream + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return std::mt19937_64(z ^ (z >> 31));
}

}  // namespace seed::tasks
