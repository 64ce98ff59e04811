// Counter-based random numbers: every draw is a pure function of its key.
//
// seed's determinism invariant says no draw may depend on which
// rank ran it or in which order a scheduler served it. A stateful generator
// cannot promise that; a counter-based one (Philox4x32-10, Salmon et al.,
// SC'11) can: the uniform for (seed, request, position, purpose, index) is
// the same wherever and whenever it is computed. Thread-safe: no state.
#pragma once

#include <array>
#include <cstdint>

namespace seed {

// Why a draw is made. Distinct purposes at the same position never share a
// stream, so e.g. the draft's sample and the verifier's accept test are
// independent.
enum class RngPurpose : uint32_t {
  kSample = 0,     // plain sampling of the next token
  kDraft = 1,      // a drafter sampling a proposal token
  kAccept = 2,     // the verifier's accept/reject uniform
  kResample = 3,   // the verifier's draw from the residual distribution
  kSearch = 4,     // decisions of the search layer (tie-breaks, rollouts)
};

struct RngKey {
  uint64_t seed = 0;     // user seed of the request
  uint64_t request = 0;  // request id within the run
  uint32_t position = 0; // token position (or step) the draw is for
  RngPurpose purpose = RngPurpose::kSample;
  uint32_t index = 0;    // several draws for the same key (e.g. tree branch)
};

// Philox4x32-10 block: four independent 32-bit words for (key, counter).
std::array<uint32_t, 4> philox4x32(std::array<uint32_t, 4> counter, std::array<uint32_t, 2> key);

// A uniform double in [0, 1) with 53 random bits, a pure function of `key`.
double uniform(const RngKey& key);

// splitmix64's finaliser (Steele et al., OOPSLA'14): a bijection of 64-bit
// words in which every input bit moves every output bit; what hashes and
// derived stream ids are made with.
inline uint64_t mix64(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace seed
