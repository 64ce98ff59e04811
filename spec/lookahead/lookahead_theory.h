// The speedup model of Lookahead Reasoning (Fu et al., 2025, "Scaling Speculative Decoding with
// Lookahead Reasoning", sec. 3.2-3.3 and appendix B.1), and the split of a parallelism
// budget between its two axes that the model says is best.
//
// Step level: a drafted step is accepted with probability alpha1 and costs
// c1 of a target step; k1 is the number of target steps run in parallel (a
// lookahead of gamma = k1 - 1 drafted steps). Token level: alpha2, c2, and
// k2 = draft length + 1. Acceptances are assumed i.i.d. and the verifier
// free.
#pragma once

namespace seed::spec {

// Token-level speculative decoding: (1 - a^k) / ((1 - a)(1 - c + c k)).
double token_speedup(int k, double alpha, double cost);
// Synchronous lookahead: the same form over steps.
double sync_step_speedup(int k, double alpha, double cost);
// Asynchronous lookahead: the draft keeps drafting while the target works.
// Rises with k up to ceil(1 / cost), then stays at 1 / (c + (1 - c)(1 - a)).
double async_step_speedup(int k, double alpha, double cost);

struct LookaheadPlan {
  int k1 = 1;  // target steps in parallel: gamma = k1 - 1 drafted steps
  int k2 = 1;  // token draft length + 1
  double speedup = 1;  // the model's speedup over autoregressive decoding
};

// The (k1, k2) that maximises step speedup x token speedup with the
// parallelism they use (k2 times k1, or for async min(k1, ceil(1 / c1)))
// at most `budget`; ties go to the smaller k1, then the smaller k2.
LookaheadPlan best_lookahead_plan(int budget, bool async, double alpha1, double cost1, double alpha2, double cost2);

}  // namespace seed::spec
