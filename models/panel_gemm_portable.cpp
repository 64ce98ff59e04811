// panel_gemm in plain C++ for CPUs without AVX2: one row of x at a time
// against a panel, 64 accumulators the compiler keeps in vector registers.
#include <c10/util/Half.h>
#include <cstdint>

#include <cstring>

#include "models/panel_gemm_kernels.h"

namespace seed::models {
namespace {

constexpr int64_t kWidth = 64;  // columns per panel (panel_width(kPortable))

inline float widen(float w) { return w; }
inline float widen(Bf16Bits w) {
  const uint32_t bits = static_cast<uint32_t>(w.bits) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}
inline float widen(F16Bits w) { return c10::detail::fp16_ieee_to_fp32_value(w.bits); }

template <typename W>
void run(const PanelGemmArgs& a) {
  const W* panels = static_cast<const W*>(a.panels);
  for (int64_t p = a.panel_begin; p < a.panel_end; ++p) {
    const int64_t n = p * kWidth;
    const int64_t columns = a.N - n < kWidth ? a.N - n : kWidth;
    const W* panel = panels + p * a.K * kWidth;
    for (int64_t m = 0; m < a.M; ++m) {
      float acc[kWidth];
      for (int64_t j = 0; j < kWidth; ++j) acc[j] = a.bias && j < columns ? a.bias[n + j] : 0.0f;
      const float* x = a.x + m * a.K;
      for (int64_t k = 0; k < a.K; ++k) {
        const W* w = panel + k * kWidth;
        for (int64_t j = 0; j < kWidth; ++j) acc[j] += x[k] * widen(w[j]);
      }
      std::memcpy(a.y + m * a.N + n, acc, static_cast<size_t>(columns) * sizeof(float));
    }
  }
}

}  // namespace

void panel_gemm_portable(const PanelGemmArgs& args) {
  with_weight_type(args.dtype, [&](auto weight) { run<decltype(weight)>(args); });
}

}  // namespace seed::models
