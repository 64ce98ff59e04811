#include "models/lazy_zeros.h"

#include <sys/mman.h>
#include <torch/torch.h>

#include <cstddef>
#include <cstdint>

namespace seed::models {
namespace {

constexpr size_t kHugePage = size_t{2} << 20;

}  // namespace

at::Tensor lazy_zeros(at::IntArrayRef shape, at::TensorOptions options, Pages pages) {
  int64_t numel = 1;
  for (int64_t size : shape) numel *= size;
  const size_t bytes = static_cast<size_t>(numel) * options.dtype().itemsize();
  // Below a huge page, the heap's pages (huge too, where malloc is told
  // to use them) beat a mapping of 4 KB pages, and its holes are small.
  if (bytes == 0 || (pages == Pages::kHuge && bytes < kHugePage)) return torch::zeros(shape, options);
  const bool huge = pages == Pages::kHuge;
  // A huge page must start on a 2 MB boundary: map one more and start there.
  const size_t mapped = huge ? bytes + kHugePage : bytes;
  void* memory = ::mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (memory == MAP_FAILED) return torch::zeros(shape, options);
  void* data = memory;
  if (huge) {
    const uintptr_t aligned = (reinterpret_cast<uintptr_t>(memory) + kHugePage - 1) / kHugePage * kHugePage;
    data = reinterpret_cast<void*>(aligned);
    ::madvise(data, bytes, MADV_HUGEPAGE);  // advice: where refused, small pages
  }
  return torch::from_blob(data, shape, [memory, mapped](void*) { ::munmap(memory, mapped); },
                          options.device(torch::kCPU));
}

}  // namespace seed::models
