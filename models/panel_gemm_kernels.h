// The per-instruction-set bodies of panel_gemm (panel_gemm.h), one file each,
// compiled with that instruction set enabled for their functions only (target
// attributes), so that nothing built for AVX-512 can run on an older CPU.
// Internal to models/.
#pragma once

#include <cstdint>
#include <vector>

#include "models/panel_gemm.h"

namespace seed::models {

// Weight element types as the kernels see them: the bits of a half-size
// float (Hugging Face's bfloat16 and IEEE float16 both store 16 bits).
struct Bf16Bits {
  uint16_t bits;
};
struct F16Bits {
  uint16_t bits;
};

// Asks for the `bytes` of a panel's stream (whole cache lines) that sit
// kPanelPrefetchBytes / streams after `step`, the start of what a step
// reads now, where a tile reads `streams` streams side by side: as far
// ahead in time as one stream, and as much in cache.
template <int64_t bytes, int64_t streams = 1>
inline void prefetch_ahead(const void* step) {
  const char* ahead = static_cast<const char*>(step) + kPanelPrefetchBytes / streams;
  for (int64_t line = 0; line < bytes; line += 64) __builtin_prefetch(ahead + line);
}

// Calls fn(W{}) with W the element type of `dtype`: each kernel file's
// run<W> is instantiated for the three dtypes.
template <typename Fn>
void with_weight_type(WeightDtype dtype, Fn&& fn) {
  switch (dtype) {
    case WeightDtype::kFloat32:
      return fn(float{});
    case WeightDtype::kBFloat16:
      return fn(Bf16Bits{});
    case WeightDtype::kFloat16:
      return fn(F16Bits{});
  }
}

void panel_gemm_avx512(const PanelGemmArgs& args);
// bfloat16 weights by rows rounded to bfloat16, with vdpbf16ps.
// REQUIRES cpu_kernel_supported(kAvx512Bf16).
void panel_gemm_avx512_bf16_products(const PanelGemmArgs& args);
// x [M, K] rounded to bfloat16 (to nearest even), two per word, each row
// k_pairs words (>= (K + 1) / 2) padded with zeros. REQUIRES AVX512_BF16.
void round_rows_to_bf16_pairs(const float* x, int64_t M, int64_t K, int64_t k_pairs, std::vector<uint32_t>& out);

// k per AMX tile of bfloat16 pairs: 16 rows of 64 bytes.
constexpr int64_t kAmxTileDepth = 32;
// bfloat16 weights only. REQUIRES cpu_kernel_supported(kAmx).
void panel_gemm_amx(const PanelGemmArgs& args);
void panel_gemm_avx2(const PanelGemmArgs& args);
void panel_gemm_portable(const PanelGemmArgs& args);

}  // namespace seed::models
