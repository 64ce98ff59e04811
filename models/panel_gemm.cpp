#include "models/panel_gemm.h"

#include <algorithm>

#include "models/panel_gemm_kernels.h"

namespace seed::models {

int64_t panel_width(CpuKernel kernel) { return kernel == CpuKernel::kAvx2 ? 16 : 64; }

void panel_gemm(CpuKernel kernel, const PanelGemmArgs& args) {
  switch (kernel) {
    case CpuKernel::kAvx512:
      return panel_gemm_avx512(args);
    case CpuKernel::kAvx2:
      return panel_gemm_avx2(args);
    case CpuKernel::kPortable:
      return panel_gemm_portable(args);
  }
}

namespace {

// Element (n, k) of W goes to panel n / width, row k, column n % width.
template <typename T>
void pack_typed(const T* w, int64_t N, int64_t K, int64_t width, T* panels) {
  const int64_t panel_count = (N + width - 1) / width;
  std::fill(panels, panels + panel_count * K * width, T{0});
  for (int64_t n = 0; n < N; ++n) {
    T* column = panels + (n / width) * K * width + n % width;
    const T* row = w + n * K;
    for (int64_t k = 0; k < K; ++k) column[k * width] = row[k];
  }
}

}  // namespace

void pack_panels(const void* weight, int64_t N, int64_t K, int64_t element_bytes, int64_t width, void* panels) {
  if (element_bytes == 4) {
    pack_typed(static_cast<const uint32_t*>(weight), N, K, width, static_cast<uint32_t*>(panels));
  } else {
    pack_typed(static_cast<const uint16_t*>(weight), N, K, width, static_cast<uint16_t*>(panels));
  }
}

}  // namespace seed::models
