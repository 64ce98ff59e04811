#include "spec/api/gumbel_top_k.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace seed::spec {

std::vector<int> gumbel_top_k(const std::vector<float>& probs, const std::vector<double>& uniforms, int m) {
  std::vector<std::pair<double, int>> keys;
  for (size_t i = 0; i < probs.size(); ++i) {
    if (!(probs[i] > 0.0f)) continue;
    // u = 0 would give -inf noise: the smallest positive double keeps it finite.
    const double u = std::max(uniforms[i], std::numeric_limits<double>::min());
    keys.push_back({std::log(static_cast<double>(probs[i])) - std::log(-std::log(u)), static_cast<int>(i)});
  }
  const size_t take = std::min(keys.size(), static_cast<size_t>(std::max(m, 0)));
  std::partial_sort(keys.begin(), keys.begin() + static_cast<std::ptrdiff_t>(take), keys.end(),
                    [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<int> out;
  for (size_t i = 0; i < take; ++i) out.push_back(keys[i].second);
  return out;
}

}  // namespace seed::spec
