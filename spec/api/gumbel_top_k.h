// Gumbel-top-k: m distinct draws from a discrete distribution, in the order
// sequential sampling without replacement would make them (Kool et al.
// 2019): perturb each log-probability with independent Gumbel(0, 1) noise
// and take the m largest. Torch-free; pure.
#pragma once

#include <cstdint>
#include <vector>

namespace seed::spec {

// Indices into `probs` of the min(m, positive entries) largest
// log(probs[i]) + g_i, largest first, with g_i = -log(-log(uniforms[i])).
// REQUIRES uniforms.size() == probs.size(), each in [0, 1). Entries with
// probability 0 are never drawn.
std::vector<int> gumbel_top_k(const std::vector<float>& probs, const std::vector<double>& uniforms, int m);

}  // namespace seed::spec
