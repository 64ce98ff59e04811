// CUDA's block primitives on the CPU, for tests of kernels' block code:
// a block's threads are std::threads, __syncthreads and a warp's shuffles
// are barriers. Blocks run one after another; shared memory starts each
// block as NaN, so a read before a write shows in the results. Include it
// before the block code.
#pragma once

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#define __host__
#define __device__

namespace seed::testing {

struct BlockIndex {
  unsigned x = 0, y = 0, z = 0;
};

// A barrier of `count` threads, reusable.
class Barrier {
 public:
  explicit Barrier(int count) : count_(count) {}
  void arrive_and_wait() {
    std::unique_lock<std::mutex> lock(mutex_);
    const uint64_t generation = generation_;
    if (++arrived_ == count_) {
      arrived_ = 0;
      ++generation_;
      all_arrived_.notify_all();
      return;
    }
    all_arrived_.wait(lock, [&] { return generation_ != generation; });
  }

 private:
  const int count_;
  int arrived_ = 0;
  uint64_t generation_ = 0;
  std::mutex mutex_;
  std::condition_variable all_arrived_;
};

struct EmulatedBlock {
  explicit EmulatedBlock(int threads) : block(threads), exchange(threads) {
    for (int w = 0; w < threads / 32; ++w) warps.push_back(std::make_unique<Barrier>(32));
  }
  Barrier block;
  std::vector<std::unique_ptr<Barrier>> warps;
  std::vector<float> exchange;  // a lane's value in a shuffle
};

inline thread_local EmulatedBlock* running_block = nullptr;

}  // namespace seed::testing

inline thread_local seed::testing::BlockIndex threadIdx, blockIdx;
inline seed::testing::BlockIndex gridDim;

inline void __syncthreads() { seed::testing::running_block->block.arrive_and_wait(); }

inline float __shfl_xor_sync(unsigned /*every lane*/, float value, int lane_mask) {
  seed::testing::EmulatedBlock& b = *seed::testing::running_block;
  const unsigned t = threadIdx.x, warp = t / 32;
  b.exchange[t] = value;
  b.warps[warp]->arrive_and_wait();
  const float other = b.exchange[warp * 32 + ((t % 32) ^ static_cast<unsigned>(lane_mask))];
  b.warps[warp]->arrive_and_wait();
  return other;
}

namespace seed::testing {

// body(shared) as every block of `grid` (x fastest), `threads` threads a
// block, with `shared_floats` floats of shared memory.
inline void run_grid(BlockIndex grid, int threads, size_t shared_floats, const std::function<void(float*)>& body) {
  EmulatedBlock block(threads);
  std::vector<float> shared(shared_floats);
  gridDim = grid;
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      running_block = &block;
      threadIdx = {static_cast<unsigned>(t), 0, 0};
      for (unsigned z = 0; z < grid.z; ++z) {
        for (unsigned y = 0; y < grid.y; ++y) {
          for (unsigned x = 0; x < grid.x; ++x) {
            if (t == 0) std::fill(shared.begin(), shared.end(), std::numeric_limits<float>::quiet_NaN());
            block.block.arrive_and_wait();
            blockIdx = {x, y, z};
            body(shared.data());
            block.block.arrive_and_wait();
          }
        }
      }
    });
  }
  for (std::thread& thread : pool) thread.join();
}

}  // namespace seed::testing
