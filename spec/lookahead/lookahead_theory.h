// The token-level speedup model of Lookahead Reasoning (Fu et al., 2025,
// "Scaling Speculative Decoding with Lookahead Reasoning", sec. 3.2 and
// appendix B.1), by which `--lookahead auto` sets the target engine's draft
// length: a drafted token is accepted with probability alpha (i.i.d.) and
// costs c of a target forward; k = draft length + 1.
#pragma once

namespace seed::spec {

// tau_max(a, k - 1) / (1 - c + c k), that is (1 - a^k) / ((1 - a)(1 - c + c k))
// (spec/api/acceptance.h). Throws kInvalidArgument unless k >= 1,
// alpha in [0, 1] and c in (0, 1).
double token_speedup(int k, double alpha, double cost);

}  // namespace seed::spec
