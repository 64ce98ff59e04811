// RequestAcceptance: how much of one request's drafts its target has
// accepted lately, beside the engine's acceptance (DraftLengthPolicy).
//
// Acceptance is a property of the text as much as of the pair: in one
// batch a thought the draft predicts whole sits beside an evaluation whose
// every drafted token is rejected, and the engine's alpha is their mix. At
// the Qwen3-0.6B shape on a 2-core CPU, six 32-token evaluations after six
// thoughts of the same pair kept drafting at the thoughts' alpha: four of
// them drafted a token a round for ten rounds, every one rejected, each
// round's forward 1.2x a plain one. So a request bets on its own verdicts,
// shrunk towards the engine's alpha by kPriorTokens drafted tokens, plus
// one standard error as the engine bets: where every request's alpha is
// the same (the zoo pair at 0.93), a rejection or two must not shorten a
// request's drafts, since only its rounds without drafts would bring them
// back. Its evidence decays with each token it tests (about the last
// twenty count, however long its drafts) and with each round it drafts
// nothing, so that a request that stopped drafting returns to the engine's
// alpha and tries again some rounds later.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace seed::spec {

struct RequestAcceptance {
  static constexpr double kTokenDecay = 0.95;      // per drafted token tested: about twenty remembered
  static constexpr double kUndraftedDecay = 0.97;  // per round that drafted nothing
  static constexpr double kPriorTokens = 1;        // the engine's alpha, as this many drafted tokens

  double accepted = 0, tested = 0;  // drafted tokens, decayed

  // A round that drafted: `accepted` of its chain, and whether a drafted
  // token was rejected.
  void add_verdict(int64_t accepted_tokens, bool rejected) {
    const double tokens = static_cast<double>(accepted_tokens) + (rejected ? 1 : 0);
    const double decay = std::pow(kTokenDecay, tokens);
    accepted = accepted * decay + static_cast<double>(accepted_tokens);
    tested = tested * decay + tokens;
  }
  // A round that drafted nothing for the request.
  void add_undrafted_round() {
    accepted *= kUndraftedDecay;
    tested *= kUndraftedDecay;
  }
  // The request's alpha given the engine's, and the alpha it bets on: that
  // plus one standard error.
  double alpha(double engine_alpha) const {
    return (accepted + kPriorTokens * engine_alpha) / (tested + kPriorTokens);
  }
  double bet(double engine_alpha) const {
    const double a = alpha(engine_alpha);
    return std::min(1.0, a + std::sqrt(a * (1 - a) / (tested + kPriorTokens)));
  }
};

}  // namespace seed::spec
