#include "models/base/counter_rng.h"

namespace seed {
namespace {

// Constants from Salmon et al., "Parallel random numbers: as easy as 1, 2, 3".
constexpr uint32_t kPhiloxM0 = 0xD2511F53u;
constexpr uint32_t kPhiloxM1 = 0xCD9E8D57u;
constexpr uint32_t kPhiloxW0 = 0x9E3779B9u;  // golden ratio
constexpr uint32_t kPhiloxW1 = 0xBB67AE85u;  // sqrt(3) - 1
constexpr int kPhiloxRounds = 10;

void mul_hi_lo(uint32_t a, uint32_t b, uint32_t& hi, uint32_t& lo) {
  const uint64_t product = static_cast<uint64_t>(a) * b;
  hi = static_cast<uint32_t>(product >> 32);
  lo = static_cast<uint32_t>(product);
}

// The Philox block of a key's fields.
std::array<uint32_t, 4> words_of(const RngKey& k) {
  const std::array<uint32_t, 4> counter = {
      static_cast<uint32_t>(k.request), static_cast<uint32_t>(k.request >> 32), k.position,
      (static_cast<uint32_t>(k.purpose) << 24) ^ k.index};
  const std::array<uint32_t, 2> key = {static_cast<uint32_t>(k.seed),
                                       static_cast<uint32_t>(k.seed >> 32)};
  return philox4x32(counter, key);
}

}  // namespace

std::array<uint32_t, 4> philox4x32(std::array<uint32_t, 4> ctr, std::array<uint32_t, 2> key) {
  for (int round = 0; round < kPhiloxRounds; ++round) {
    uint32_t hi0, lo0, hi1, lo1;
    mul_hi_lo(kPhiloxM0, ctr[0], hi0, lo0);
    mul_hi_lo(kPhiloxM1, ctr[2], hi1, lo1);
    ctr = {hi1 ^ ctr[1] ^ key[0], lo1, hi0 ^ ctr[3] ^ key[1], lo0};
    key[0] += kPhiloxW0;
    key[1] += kPhiloxW1;
  }
  return ctr;
}

double uniform(const RngKey& k) {
  const auto words = words_of(k);
  // 53 bits: 27 from the first word, 26 from the second.
  const uint64_t bits = (static_cast<uint64_t>(words[0] >> 5) << 26) | (words[1] >> 6);
  return static_cast<double>(bits) * (1.0 / 9007199254740992.0);  // 2^-53
}

uint64_t stream_bits(const RngKey& k) {
  const auto words = words_of(k);
  return (static_cast<uint64_t>(words[2]) << 32) | words[3];
}

}  // namespace seed
