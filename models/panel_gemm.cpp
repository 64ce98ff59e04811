#include "models/panel_gemm.h"

#include <algorithm>

#include "models/panel_gemm_kernels.h"

namespace seed::models {

int64_t panel_width(CpuKernel kernel) { return kernel == CpuKernel::kAvx2 ? 16 : 64; }

void panel_gemm(CpuKernel kernel, const PanelGemmArgs& args) {
  switch (kernel) {
    case CpuKernel::kAmx:
      return args.dtype == WeightDtype::kBFloat16 ? panel_gemm_amx(args) : panel_gemm_avx512(args);
    case CpuKernel::kAvx512Bf16:
      return args.dtype == WeightDtype::kBFloat16 ? panel_gemm_avx512_bf16_products(args) : panel_gemm_avx512(args);
    case CpuKernel::kAvx512:
      return panel_gemm_avx512(args);
    case CpuKernel::kAvx2:
      return panel_gemm_avx2(args);
    case CpuKernel::kPortable:
      return panel_gemm_portable(args);
  }
}

bool panel_gemm_rounds_x(CpuKernel kernel, WeightDtype dtype) {
  return dtype == WeightDtype::kBFloat16 && (kernel == CpuKernel::kAmx || kernel == CpuKernel::kAvx512Bf16);
}

namespace {

// How a panel holds its elements.
enum class PanelLayout {
  kRows,  // row k, column n % width
  // 16-column slices one after the other, each [rows, 16]: a tile that
  // multiplies one slice reads it as one sequential stream
  kSlices,
  // slices of k pairs, each [rows / 2, 16, 2]: two-wide columns, as
  // vdpbf16ps reads them
  kSlicedPairs,
  // the pairs in blocks of kAmxTileDepth k by 16 columns, each block
  // contiguous (one AMX B tile), blocks by column then by k
  kTiles,
};

PanelLayout panel_layout(CpuKernel kernel, WeightDtype dtype) {
  switch (kernel) {
    case CpuKernel::kAmx:
      return dtype == WeightDtype::kBFloat16 ? PanelLayout::kTiles : PanelLayout::kSlices;
    case CpuKernel::kAvx512Bf16:
    case CpuKernel::kAvx512:
      return dtype == WeightDtype::kBFloat16 ? PanelLayout::kSlicedPairs : PanelLayout::kSlices;
    case CpuKernel::kAvx2:
    case CpuKernel::kPortable:
      return PanelLayout::kRows;
  }
  return PanelLayout::kRows;
}

// Where element (n, k) of W sits in its panel (panel n / width), c = n % width,
// in a panel of `depth` rows.
template <PanelLayout layout>
int64_t panel_offset(int64_t c, int64_t k, int64_t width, int64_t depth) {
  constexpr int64_t kSlice = 16;
  if constexpr (layout == PanelLayout::kRows) {
    return k * width + c;
  } else if constexpr (layout == PanelLayout::kSlices) {
    return (c / kSlice) * depth * kSlice + k * kSlice + c % kSlice;
  } else if constexpr (layout == PanelLayout::kSlicedPairs) {
    return (c / kSlice) * depth * kSlice + (k / 2) * 2 * kSlice + 2 * (c % kSlice) + k % 2;
  } else {
    constexpr int64_t kTile = kAmxTileDepth * kSlice;
    return (k / kAmxTileDepth) * kAmxTileDepth * width + (c / kSlice) * kTile + (k % kAmxTileDepth / 2) * 2 * kSlice +
           2 * (c % kSlice) + k % 2;
  }
}

// panel_offset<layout> as a callable.
template <PanelLayout layout>
struct PanelOffset {
  int64_t operator()(int64_t c, int64_t k, int64_t width, int64_t depth) const {
    return panel_offset<layout>(c, k, width, depth);
  }
};

// Calls fn(PanelOffset<layout>{}) with `layout` a constant, so that the
// loops over a matrix's elements are compiled once per layout.
template <typename Fn>
void with_layout(PanelLayout layout, Fn&& fn) {
  switch (layout) {
    case PanelLayout::kRows:
      return fn(PanelOffset<PanelLayout::kRows>{});
    case PanelLayout::kSlices:
      return fn(PanelOffset<PanelLayout::kSlices>{});
    case PanelLayout::kSlicedPairs:
      return fn(PanelOffset<PanelLayout::kSlicedPairs>{});
    case PanelLayout::kTiles:
      return fn(PanelOffset<PanelLayout::kTiles>{});
  }
}

// Elements of k a layout keeps side by side for one column: two where it
// interleaves bfloat16 pairs, else one.
int64_t k_unit(PanelLayout layout) {
  return layout == PanelLayout::kSlicedPairs || layout == PanelLayout::kTiles ? 2 : 1;
}

// Copies a block of 16 columns by 16 units of k (a unit: `unit` elements
// of k) from w's rows (`K` apart) into the panel, where every layout lays
// such a block out by k unit then by column, its 16 units of a k unit
// side by side and `stride` units after those of the unit before: a
// transpose of 16 x 16 units through registers and L1, where placing each
// element alone would write a cache line per element.
template <typename T, int64_t unit>
void pack_block(const T* w, int64_t K, int64_t stride, T* block) {
  for (int64_t j = 0; j < 16; ++j) {
    const T* row = w + j * K;
    for (int64_t i = 0; i < 16; ++i) {
      for (int64_t e = 0; e < unit; ++e) block[(i * stride + j) * unit + e] = row[i * unit + e];
    }
  }
}

template <typename T>
void pack_typed(const T* w, int64_t N, int64_t K, int64_t rows, int64_t width, PanelLayout layout, T* panels) {
  const int64_t unit = k_unit(layout);
  // A panel of rows holds a k unit's columns across its width; the others
  // hold them in 16-column slices.
  const int64_t stride = layout == PanelLayout::kRows ? width : 16;
  // The whole blocks, then the columns and k beyond them one by one.
  const int64_t block_n = N / 16 * 16, block_k = K / (16 * unit) * (16 * unit);
  with_layout(layout, [&](auto offset) {
    for (int64_t n = 0; n < block_n; n += 16) {
      T* panel = panels + (n / width) * rows * width;
      for (int64_t k = 0; k < block_k; k += 16 * unit) {
        T* block = panel + offset(n % width, k, width, rows);
        if (unit == 2) {
          pack_block<T, 2>(w + n * K + k, K, stride, block);
        } else {
          pack_block<T, 1>(w + n * K + k, K, stride, block);
        }
      }
    }
    const auto place = [&](int64_t n, int64_t k_begin) {
      T* panel = panels + (n / width) * rows * width;
      const T* row = w + n * K;
      for (int64_t k = k_begin; k < K; ++k) panel[offset(n % width, k, width, rows)] = row[k];
    };
    for (int64_t n = 0; n < block_n; ++n) place(n, block_k);
    for (int64_t n = block_n; n < N; ++n) place(n, 0);
    // Zeros where the panels pad: columns past N, k past K.
    const int64_t padded_n = (N + width - 1) / width * width;
    for (int64_t n = 0; n < padded_n; ++n) {
      T* panel = panels + (n / width) * rows * width;
      for (int64_t k = n < N ? K : 0; k < rows; ++k) panel[offset(n % width, k, width, rows)] = T{0};
    }
  });
}

template <typename T>
void unpack_typed(const T* panels, int64_t K, int64_t panel_rows, int64_t width, PanelLayout layout,
                  const int64_t* rows, int64_t count, T* out) {
  with_layout(layout, [&](auto offset) {
    for (int64_t i = 0; i < count; ++i) {
      const int64_t n = rows[i];
      const T* panel = panels + (n / width) * panel_rows * width;
      for (int64_t k = 0; k < K; ++k) out[i * K + k] = panel[offset(n % width, k, width, panel_rows)];
    }
  });
}

}  // namespace

int64_t panel_rows(CpuKernel kernel, WeightDtype dtype, int64_t K) {
  switch (panel_layout(kernel, dtype)) {
    case PanelLayout::kTiles:
      return (K + kAmxTileDepth - 1) / kAmxTileDepth * kAmxTileDepth;
    case PanelLayout::kSlicedPairs:
      return K + K % 2;
    case PanelLayout::kSlices:
    case PanelLayout::kRows:
      return K;
  }
  return K;
}

void pack_panels(CpuKernel kernel, WeightDtype dtype, const void* weight, int64_t N, int64_t K, void* panels) {
  const int64_t width = panel_width(kernel), rows = panel_rows(kernel, dtype, K);
  const PanelLayout layout = panel_layout(kernel, dtype);
  if (dtype == WeightDtype::kFloat32) {
    pack_typed(static_cast<const uint32_t*>(weight), N, K, rows, width, layout, static_cast<uint32_t*>(panels));
  } else {
    pack_typed(static_cast<const uint16_t*>(weight), N, K, rows, width, layout, static_cast<uint16_t*>(panels));
  }
}

void unpack_panel_rows(CpuKernel kernel, WeightDtype dtype, const void* panels, int64_t K, const int64_t* rows,
                       int64_t count, void* out) {
  const int64_t width = panel_width(kernel), depth = panel_rows(kernel, dtype, K);
  const PanelLayout layout = panel_layout(kernel, dtype);
  if (dtype == WeightDtype::kFloat32) {
    unpack_typed(static_cast<const uint32_t*>(panels), K, depth, width, layout, rows, count,
                 static_cast<uint32_t*>(out));
  } else {
    unpack_typed(static_cast<const uint16_t*>(panels), K, depth, width, layout, rows, count,
                 static_cast<uint16_t*>(out));
  }
}

}  // namespace seed::models
