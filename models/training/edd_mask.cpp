#include "models/training/edd_mask.h"

#include <cstdint>
#include <torch/torch.h>

#include "models/base/error.h"

namespace seed::models {

at::Tensor edd_block_mask(int64_t rows, int64_t block) {
  SEED_CHECK(rows >= 1 && block >= 1, kInvalidArgument)
      << "edd_block_mask needs rows >= 1 and block >= 1, got " << rows << " and " << block;
  const at::Tensor p = torch::arange(rows, torch::kLong);
  const at::Tensor row = p.unsqueeze(1), col = p.unsqueeze(0);
  const at::Tensor block_start = (p - p.remainder(block)).unsqueeze(1);  // s_b of each token row
  const at::Tensor causal = col <= row;
  const at::Tensor hidden_before_block = col < block_start;
  const at::Tensor own_block_so_far = causal.logical_and(col >= block_start);
  at::Tensor allowed = torch::zeros({2 * rows, 2 * rows}, torch::kBool);
  allowed.narrow(0, 0, rows).narrow(1, 0, rows).copy_(causal);
  allowed.narrow(0, rows, rows).narrow(1, 0, rows).copy_(hidden_before_block);
  allowed.narrow(0, rows, rows).narrow(1, rows, rows).copy_(own_block_so_far);
  return allowed;
}

int64_t edd_block_length(uint64_t seed, int64_t step, int64_t block_min, int64_t block_max) {
  SEED_CHECK(block_min >= 1 && block_max >= block_min, kInvalidArgument)
      << "edd_block_length needs 1 <= block_min <= block_max, got " << block_min << " and " << block_max;
  // splitmix64 of (seed, step): a well-mixed draw without a stateful generator.
  uint64_t z = seed * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(step) + 0x632BE59BD9B4E019ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return block_min + static_cast<int64_t>(z % static_cast<uint64_t>(block_max - block_min + 1));
}

}  // namespace seed::models
