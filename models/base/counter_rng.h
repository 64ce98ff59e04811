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

// 64 random bits, a pure function of `key`: the stream of a vocabulary's
// worth of uniforms, one per token (token_uniform).
uint64_t stream_bits(const RngKey& key);

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

// The uniform in (0, 1) of `token` in `stream` (stream_bits): splitmix64's
// output `token + 1` steps after the state `stream`, its top 53 bits, the
// middle of their interval (never 0, so that its log is finite). One
// multiply-xorshift hash per token, so that a vocabulary's worth costs about
// what a pass over its logits does; logit_summary.cpp computes the same
// words with tensor operations where the logits are.
inline double token_uniform(uint64_t stream, int64_t token) {
  const uint64_t bits = mix64(stream + static_cast<uint64_t>(token + 1) * 0x9e3779b97f4a7c15ULL) >> 11;
  return (static_cast<double>(bits) + 0.5) * (1.0 / 9007199254740992.0);  // 2^-53
}

}  // namespace seed
