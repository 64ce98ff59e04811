// What memory a device has available: the host's for the CPU, the card's
// for a GPU. For budgets that would otherwise take more than is there (a KV
// cache's default size, benchmark engines held side by side) and for
// refusing a model that cannot fit before it loads.
#pragma once

#include <c10/core/Device.h>

#include <cstdint>

namespace seed::models {

// Bytes available now on `device`: for the CPU, the host's MemAvailable
// (free pages and the page cache the kernel can reclaim, such as a model
// file just read); for CUDA, the card's free memory (throws seed::Error in a
// build without CUDA).
int64_t available_memory_bytes(const c10::Device& device);

// The CUDA half, defined where libtorch has CUDA.
int64_t cuda_free_memory_bytes(c10::DeviceIndex index);

}  // namespace seed::models
