// Draft acceptance under speculative sampling: how often a draft model's
// tokens survive the target's lossless verification (spec/api/verifier.h).
//
// Runs serial speculative decoding on the engines' own handles (a
// ModelTarget and the draft's drafter: a draft model's or an EDD's): draft
// a chain of k tokens, verify with one target forward, keep the accepted
// prefix and the bonus token, and count: the acceptance rate alpha the zoo
// pair is trained for, as the engines report it.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "models/causal_lm.h"
#include "models/base/sampling.h"
#include "spec/api/acceptance.h"
#include "spec/api/drafter.h"

namespace seed::eval {

struct AcceptanceOptions {
  int draft_length = 4;           // k
  int max_new_tokens = 64;        // per prompt
  SamplingParams sampling;        // for both models
  uint64_t seed = 0;
  int32_t eos = -1;
  // Sampled requests draw their drafts from q' (DraftSettings::
  // sample_drafts) rather than propose q's winner of the target's race; the
  // engines' default by default, so that alpha is what they see.
  bool sample_drafts = false;
  // The q' drawn drafts are drawn from and carry: the engines' cut by
  // default.
  spec::DraftTruncation draft_cut;
};

// How well the draft's confidence in a token predicts that the target
// accepts it: tokens binned by confidence into ten equal bins, and the
// expected calibration error sum_b (n_b / n) |accepted_b / n_b - mean
// confidence_b| (the figure EDD/PCT reports, 0.019 for its draft).
struct Calibration {
  static constexpr int kBins = 10;
  std::array<int64_t, kBins> tokens{};
  std::array<int64_t, kBins> accepted{};
  std::array<double, kBins> confidence{};  // summed
  void add(double token_confidence, bool was_accepted);
  int64_t total() const;
  double ece() const;
};

struct AcceptanceResult {
  int64_t proposed = 0;    // draft tokens verified
  int64_t accepted = 0;    // of those, accepted
  int64_t rejections = 0;  // rounds that ended by rejecting a drafted token
  int64_t rounds = 0;      // target verification forwards
  int64_t generated = 0;   // tokens emitted (accepted + bonus)
  // Each drafted token up to the first rejection (the ones verification
  // decided on): the draft's probability of it (at temperature 1 for greedy
  // requests) against whether it was accepted.
  Calibration calibration;
  // The acceptance rate alpha, accepted over tested draft tokens, as the
  // engines report it (spec/api/acceptance.h).
  double alpha() const { return spec::acceptance_rate(accepted, accepted + rejections); }
  // Accepted over all drafted tokens, those after a rejection included.
  double accepted_fraction() const { return proposed ? static_cast<double>(accepted) / proposed : 0.0; }
  double tokens_per_round() const { return rounds ? static_cast<double>(generated) / rounds : 0.0; }
};

// Prompt i is request i (its stream). Throws kInvalidArgument when the
// vocabularies differ or an EDD draft does not fit the target.
AcceptanceResult measure_acceptance(std::shared_ptr<models::CausalLM> target,
                                    std::shared_ptr<const models::CausalLM> draft,
                                    const std::vector<std::vector<int32_t>>& prompts,
                                    const AcceptanceOptions& options);

}  // namespace seed::eval
