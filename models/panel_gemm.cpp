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

bool panel_gemm_rounds_x(CpuKernel kernel, WeightDtype dtype) {
  return kernel == CpuKernel::kAvx512 && dtype == WeightDtype::kBFloat16 && avx512_bf16_products();
}

int64_t panel_rows(CpuKernel kernel, WeightDtype dtype, int64_t K) {
  return panel_gemm_rounds_x(kernel, dtype) ? K + K % 2 : K;
}

namespace {

// Element (n, k) of W goes to panel n / width, row k, column n % width; with
// `pairs`, to row k / 2, column n % width, slot k % 2 of a panel of two-wide
// columns.
// Where element (n, k) of W sits in its panel.
int64_t panel_offset(int64_t n, int64_t k, int64_t width, bool pairs) {
  return pairs ? (k / 2) * 2 * width + 2 * (n % width) + k % 2 : k * width + n % width;
}

template <typename T>
void pack_typed(const T* w, int64_t N, int64_t K, int64_t width, bool pairs, T* panels) {
  const int64_t panel_count = (N + width - 1) / width, rows = pairs ? K + K % 2 : K;
  std::fill(panels, panels + panel_count * rows * width, T{0});
  for (int64_t n = 0; n < N; ++n) {
    T* panel = panels + (n / width) * rows * width;
    const T* row = w + n * K;
    for (int64_t k = 0; k < K; ++k) panel[panel_offset(n, k, width, pairs)] = row[k];
  }
}

template <typename T>
void unpack_typed(const T* panels, int64_t K, int64_t width, bool pairs, const int64_t* rows, int64_t count, T* out) {
  const int64_t panel_rows = pairs ? K + K % 2 : K;
  for (int64_t i = 0; i < count; ++i) {
    const int64_t n = rows[i];
    const T* panel = panels + (n / width) * panel_rows * width;
    for (int64_t k = 0; k < K; ++k) out[i * K + k] = panel[panel_offset(n, k, width, pairs)];
  }
}

}  // namespace

void pack_panels(CpuKernel kernel, WeightDtype dtype, const void* weight, int64_t N, int64_t K, void* panels) {
  const int64_t width = panel_width(kernel);
  const bool pairs = panel_gemm_rounds_x(kernel, dtype);
  if (dtype == WeightDtype::kFloat32) {
    pack_typed(static_cast<const uint32_t*>(weight), N, K, width, pairs, static_cast<uint32_t*>(panels));
  } else {
    pack_typed(static_cast<const uint16_t*>(weight), N, K, width, pairs, static_cast<uint16_t*>(panels));
  }
}

void unpack_panel_rows(CpuKernel kernel, WeightDtype dtype, const void* panels, int64_t K, const int64_t* rows,
                       int64_t count, void* out) {
  const int64_t width = panel_width(kernel);
  const bool pairs = panel_gemm_rounds_x(kernel, dtype);
  if (dtype == WeightDtype::kFloat32) {
    unpack_typed(static_cast<const uint32_t*>(panels), K, width, pairs, rows, count, static_cast<uint32_t*>(out));
  } else {
    unpack_typed(static_cast<const uint16_t*>(panels), K, width, pairs, rows, count, static_cast<uint16_t*>(out));
  }
}

}  // namespace seed::models
