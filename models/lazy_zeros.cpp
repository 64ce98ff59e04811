#include "models/lazy_zeros.h"

#include <sys/mman.h>
#include <torch/torch.h>

#include <cstddef>

namespace seed::models {

at::Tensor lazy_zeros(at::IntArrayRef shape, at::TensorOptions options) {
  int64_t numel = 1;
  for (int64_t size : shape) numel *= size;
  const size_t bytes = static_cast<size_t>(numel) * options.dtype().itemsize();
  if (bytes == 0) return torch::zeros(shape, options);
  void* memory = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (memory == MAP_FAILED) return torch::zeros(shape, options);
  return torch::from_blob(memory, shape, [bytes](void* p) { ::munmap(p, bytes); }, options.device(torch::kCPU));
}

}  // namespace seed::models
