#include "parallel/collective_layout.h"

#include <ATen/ATen.h>
#include <cstdint>

#include <vector>

#include "models/base/error.h"

namespace seed::parallel::detail {

void check_tensor(const at::Tensor& tensor, const char* backend, const char* op) {
  SEED_CHECK(tensor.defined(), kInvalidArgument) << backend << " " << op << ": the tensor is undefined";
  SEED_CHECK(tensor.is_contiguous(), kInvalidArgument)
      << backend << " " << op << " needs a contiguous tensor; call .contiguous() first";
}

void check_root(int root, int size, const char* backend) {
  SEED_CHECK(root >= 0 && root < size, kInvalidArgument)
      << backend << " broadcast root " << root << " is not a rank of a group of " << size;
}

int64_t normalize_dim(int64_t dim, int64_t rank, const char* backend) {
  const int64_t normalized = dim < 0 ? dim + rank : dim;
  SEED_CHECK(normalized >= 0 && normalized < rank, kInvalidArgument)
      << backend << " all_gather: dim " << dim << " is outside a tensor of " << rank << " dimensions";
  return normalized;
}

at::Tensor concat_gathered(const at::Tensor& stacked, int64_t dim) {
  if (dim == 0) {  // rank-major is already the concatenation along dim 0
    std::vector<int64_t> shape(stacked.sizes().begin() + 1, stacked.sizes().end());
    shape[0] *= stacked.size(0);
    return stacked.view(shape);
  }
  // [P, d0, .., dn] -> [d0, .., P, d_dim, .., dn] -> merge P into d_dim.
  std::vector<int64_t> shape(stacked.sizes().begin() + 1, stacked.sizes().end());
  shape[dim] *= stacked.size(0);
  return stacked.movedim(0, dim).reshape(shape);
}

}  // namespace seed::parallel::detail
