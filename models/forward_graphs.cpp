#include "models/forward_graphs.h"

#include <algorithm>

namespace seed::models {

namespace {

int64_t power_of_two_at_least(int64_t n) {
  int64_t p = 1;
  while (p < n) p *= 2;
  return p;
}

}  // namespace

std::optional<PaddedShape> graph_shape(int64_t batch, int64_t seq, int64_t keys_needed_at_seq) {
  const int64_t B = power_of_two_at_least(batch), S = power_of_two_at_least(seq);
  if (B * S > kMaxGraphRows) return std::nullopt;
  return PaddedShape{B, S, graph_key_positions(keys_needed_at_seq + S - seq), /*every_row=*/true};
}

int64_t graph_key_positions(int64_t keys) {
  constexpr int64_t kSmallest = 64;
  int64_t power = 1;
  while (power * 2 <= keys) power *= 2;
  const int64_t step = std::max<int64_t>(kSmallest, power / 4);
  return (keys + step - 1) / step * step;
}

}  // namespace seed::models
