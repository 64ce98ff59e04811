// exp(x) for x <= 0 to float precision, in a form loops vectorise.
//
// Cephes' expf: x = n ln 2 + r, a degree-6 polynomial in r, times 2^n.
// std::exp is a scalar call: on a 128k vocabulary it cost as much as a decode
// step of a small model, and in a decode step's softmax and SwiGLU it cost
// more than the arithmetic around it. Loops calling this vectorise only in
// files compiled with -fno-trapping-math (seed never enables FP exceptions).
// Below -87 (under 1e-38, and -inf) it returns exactly 0.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace seed {

inline float exp_nonpositive(float x) {
  constexpr float kRound = 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer
  const float clamped = std::max(x, -87.0f);
  const float n = (clamped * 1.44269504088896341f + kRound) - kRound;
  const float r = (clamped - n * 0.693359375f) - n * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  const int32_t bits = (static_cast<int32_t>(n) + 127) << 23;
  float scale;
  std::memcpy(&scale, &bits, sizeof(scale));
  return x < -87.0f ? 0.0f : p * scale;
}

}  // namespace seed
