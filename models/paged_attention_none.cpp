// paged_attention for a build without its CUDA kernels: never fits.
#include "models/paged_attention.h"

#include "models/base/error.h"

namespace seed::models {

bool paged_attention_fits(const at::TensorOptions&, int64_t, int64_t) { return false; }

at::Tensor paged_attention(const at::Tensor&, const at::Tensor&, const at::Tensor&, const PaddedBatch::Parts&,
                           int64_t, int64_t, int64_t) {
  SEED_FAIL(kInternal) << "paged_attention called in a build without its CUDA kernels";
}

}  // namespace seed::models
