// What memory a device has free: the host's for the CPU, the card's for a
// GPU. For budgets that would otherwise take more than is there (a KV
// cache's default size, benchmark engines held side by side).
#pragma once

#include <c10/core/Device.h>

#include <cstdint>

namespace seed::models {

// Bytes free now on `device`: the host's free pages for the CPU, the
// card's free memory for CUDA (throws seed::Error in a build without CUDA).
int64_t free_memory_bytes(const c10::Device& device);

// The CUDA half, defined where libtorch has CUDA.
int64_t cuda_free_memory_bytes(c10::DeviceIndex index);

}  // namespace seed::models
