#include "models/forward_graphs.h"

namespace seed::models {

int64_t graph_key_positions(int64_t keys) {
  constexpr int64_t kSmallest = 64;
  int64_t power = 1;
  while (power * 2 <= keys) power *= 2;
  const int64_t step = std::max<int64_t>(kSmallest, power / 4);
  return (keys + step - 1) / step * step;
}

}  // namespace seed::models
