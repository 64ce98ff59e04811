// Sampling: the distribution a token is drawn from, and the draw itself.
//
// Speculative decoding is lossless only if the draft's q and the target's p
// are the *same* transformation of each model's logits (temperature, top-k,
// top-p) as plain sampling uses. So this file computes that distribution
// explicitly, and draws from it with randomness from the counter-based RNG
// (counter_rng.h): by inverse CDF with one uniform (sample_from), or by an
// exponential race with one uniform per token (race_from). A draw is a pure
// function of (logits, params, key). No torch: plain float spans, usable by
// every layer.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace seed {

// Throws kInvalidArgument, the message starting "NAME: ", unless
// `temperature` is finite and >= 0: what a temperature flag is checked by.
void check_temperature(float temperature, const std::string& name);

struct SamplingParams {
  float temperature = 1.0f;  // 0 means greedy (argmax)
  int32_t top_k = 0;         // keep the k most likely tokens; 0 = all
  float top_p = 1.0f;        // keep the smallest set with mass >= top_p; 1 = all

  bool greedy() const { return temperature <= 0.0f; }
  // Throws kInvalidArgument for a temperature negative or not finite,
  // top_k < 0 or top_p outside (0, 1], the message starting with the
  // field's name as `name` gives it (a flag, "FILE: field 'generate.top_p'");
  // unset: the field's own ("top_p").
  void validate(const std::function<std::string(const std::string& field)>& name = {}) const;
};

// Index of the largest logit; ties go to the lowest index. Requires vocab >= 1
// and no NaN (sampling_distribution checks both; this is the raw scan).
int32_t argmax(const float* logits, int64_t vocab);

// Writes into probs[0..vocab) the distribution sampling draws from:
// softmax(logits / temperature) restricted to the top_k tokens, then to the
// smallest prefix (by descending probability, ties by lower id) whose mass
// reaches top_p of what top_k kept, renormalised; at least one token stays.
// Greedy: one-hot on argmax(logits), top_k and top_p ignored. -inf logits
// (masked tokens) get probability 0. Linear in vocab unless top_p < 1.
// Throws kInvalidArgument (probs then unspecified) for invalid params, a NaN
// or +inf logit, or every logit -inf.
void sampling_distribution(const float* logits, int64_t vocab, const SamplingParams& params,
                           float* probs);

// What sampling_distribution gives a token when top_k and top_p keep every
// token, without writing the row: p(v) = exp_nonpositive((logits[v] -
// max_logit) / temperature) * scale, bit for bit the value the dense row
// holds. Two passes over the row (its max, the mass of its exponentials).
// Requires temperature > 0; throws kInvalidArgument as sampling_distribution
// does for a NaN or +inf logit or every logit -inf.
struct SoftmaxScale {
  int32_t argmax = 0;
  float max_logit = 0.0f;
  float scale = 0.0f;  // 1 / the mass, rounded to float
};
SoftmaxScale softmax_scale(const float* logits, int64_t vocab, float temperature);
float softmax_prob(const float* logits, const SoftmaxScale& scale, float temperature, int32_t token);

// Inverse-CDF draw: the first index whose cumulative probability exceeds
// u * total mass (sums in double; probs need not be normalised). Never
// returns a zero-probability index. Throws kInvalidArgument if u is outside
// [0, 1) or the mass is not positive and finite.
int32_t sample_from(const float* probs, int64_t vocab, double u);

// Exponential-race draw (Gumbel-max in other words): the index v with
// weights[v] > 0 that minimises E_v / weights[v], E_v = -log(token_uniform(
// stream, v)) being one Exp(1) variable per token; ties to the lower index.
// E_v / w_v is Exp(w_v), and the least of independent exponentials is v
// with probability w_v / sum(w): a draw from the normalised weights.
// Speculation races two distributions on one stream: a draft proposes its
// own winner, which is the target's wherever p and q are close, whatever
// the vocabulary's order (the coupling of drafter-invariant speculative
// decoding). Throws kInvalidArgument if no weight is positive and finite.
int32_t race_from(const float* weights, int64_t vocab, uint64_t stream);
// The race over `count` of the vocabulary's tokens, weights[i] that of
// tokens[i] (ascending): the winner race_from gives the whole vocabulary
// with weight 0 elsewhere, as its index into `tokens`.
int32_t race_from(const float* weights, const int64_t* tokens, int64_t count, uint64_t stream);

}  // namespace seed
