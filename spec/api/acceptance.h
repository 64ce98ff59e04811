// The figures speculation is measured and planned by, defined once: the
// acceptance rate alpha and the tokens a round gains at best, tau_max.
//
// A round tests its drafted tokens (or steps) in order up to the first
// rejection: so it tests its accepted ones and at most one rejected one.
// alpha is accepted over tested, the probability the i.i.d. model of
// speculative decoding (Leviathan et al. 2023, section 3.1) gives each
// drafted token, of which tau_max is the consequence.
#pragma once

#include <cmath>
#include <cstdint>

namespace seed::spec {

// alpha: accepted over tested drafted tokens (or steps); 0 when none was
// tested.
inline double acceptance_rate(int64_t accepted, int64_t tested) {
  return tested > 0 ? double(accepted) / double(tested) : 0.0;
}

// Laplace's rule of succession, (accepted + 1) / (tested + 2): the
// acceptance rate a planner bets on before it has seen much, which one
// early rejection does not drive to 0 (nor one acceptance to 1). Counts
// may be decayed (fractional).
inline double smoothed_acceptance_rate(double accepted, double tested) {
  return (accepted + 1) / (tested + 2);
}

// tau_max = (1 - alpha^(k+1)) / (1 - alpha): what a round of k drafted
// tokens gains on average when each is accepted with probability alpha up
// to the first rejection, plus the target's own token; k + 1 at alpha 1.
// REQUIRES alpha in [0, 1], k >= 0.
inline double tau_max(double alpha, int k) {
  return alpha < 1 ? (1 - std::pow(alpha, k + 1)) / (1 - alpha) : k + 1.0;
}

}  // namespace seed::spec
