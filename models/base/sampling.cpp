// Sampling distribution and its draws (see sampling.h).
//
// Cost is linear in the vocabulary unless top-p is on: no sort when top-k and
// top-p are off, nth_element for top-k, and for top-p only the head of the
// distribution is sorted, in chunks that double until the nucleus is found
// (usually a few dozen tokens out of 32k-256k).
#include "models/base/sampling.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

#include "models/base/counter_rng.h"
#include "models/base/error.h"
#include "models/base/exp_nonpositive.h"

namespace seed {
namespace {

// First chunk of the top-p sort; a peaked distribution's nucleus fits in it.
constexpr size_t kNucleusFirstChunk = 64;

// Orders token ids by descending probability, ties to the lower id: the
// ranking both top-k and top-p cut.
struct MoreLikely {
  const float* probs;
  bool operator()(int32_t a, int32_t b) const {
    return probs[a] > probs[b] || (probs[a] == probs[b] && a < b);
  }
};

// out[i] = exp((logits[i] - max_logit) / temperature); the arrays must not
// overlap (which lets the loop vectorise).
void exp_of_scaled(const float* __restrict logits, int64_t vocab, float max_logit, float temperature,
                   float* __restrict out) {
  for (int64_t i = 0; i < vocab; ++i) out[i] = exp_nonpositive((logits[i] - max_logit) / temperature);
}


// The mass of the positive entries (NaN included, so that it poisons the
// sum), in double over eight interleaved partial sums: a fixed order (the
// result is a pure function of the input) that does not wait on one adder.
double positive_mass(const float* probs, int64_t n) {
  double partial[8] = {};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (int j = 0; j < 8; ++j) partial[j] += probs[i + j] <= 0.0f ? 0.0f : probs[i + j];
  }
  double total = 0.0;
  for (; i < n; ++i) total += probs[i] <= 0.0f ? 0.0f : probs[i];
  for (double p : partial) total += p;
  return total;
}

// scaled_exp_mass's block: exp_of_scaled's vectorised loop writes it and
// it stays in the L1 cache for the sums (computing each exponential inside
// the sums did not vectorise, and took 2.7 times as long on a 152K
// vocabulary). A multiple of positive_mass's eight lanes, so that the
// blocks add up in its order.
constexpr int64_t kBlock = 512;

// positive_mass of exp_of_scaled's output, in the same order, without
// writing a row: what softmax_prob reads must equal the dense row bit for
// bit.
double scaled_exp_mass(const float* logits, int64_t n, float max_logit, float temperature) {
  float e[kBlock];
  double partial[8] = {};
  double total = 0.0;
  for (int64_t first = 0; first < n; first += kBlock) {
    const int64_t m = std::min(kBlock, n - first);
    exp_of_scaled(logits + first, m, max_logit, temperature, e);
    int64_t i = 0;
    for (; i + 8 <= m; i += 8) {
      for (int j = 0; j < 8; ++j) partial[j] += e[i + j] <= 0.0f ? 0.0f : e[i + j];
    }
    for (; i < m; ++i) total += e[i] <= 0.0f ? 0.0f : e[i];  // the last block's tail alone
  }
  for (double p : partial) total += p;
  return total;
}

// Token ids are int32_t.
void check_vocab(int64_t vocab) {
  SEED_CHECK(vocab > 0 && vocab <= std::numeric_limits<int32_t>::max(), kInvalidArgument)
      << "vocab must be in [1, 2^31), got " << vocab;
}

// Like argmax, but rejects logits no distribution can come from. The scan
// for the max has no branch, so that it vectorises and the checks cost little.
int32_t checked_argmax(const float* logits, int64_t vocab) {
  check_vocab(vocab);
  constexpr float kInf = std::numeric_limits<float>::infinity();
  float max_logit = -kInf;
  bool all_below_inf = true;  // false on NaN (compares false) or +inf
  for (int64_t i = 0; i < vocab; ++i) {
    max_logit = std::max(max_logit, logits[i]);
    all_below_inf &= logits[i] < kInf;
  }
  if (!all_below_inf) {
    const auto not_below_inf = [](float x) { return !(x < kInf); };
    const int64_t bad = std::find_if(logits, logits + vocab, not_below_inf) - logits;
    SEED_FAIL(kInvalidArgument) << "logit " << bad << " is " << logits[bad]
                                << "; the model produced non-finite values";
  }
  SEED_CHECK(max_logit > -kInf, kInvalidArgument)
      << "all " << vocab << " logits are -inf: every token is masked";
  return static_cast<int32_t>(std::find(logits, logits + vocab, max_logit) - logits);
}

// Moves the nucleus to the front of `kept`, by descending probability (ties:
// lower id), and returns its size: the smallest prefix whose mass reaches
// top_p of the kept mass, at least 1.
size_t nucleus_size(std::vector<int32_t>& kept, const float* probs, float top_p) {
  double total = 0.0;
  for (const int32_t id : kept) total += probs[id];
  const double target = static_cast<double>(top_p) * total;
  const MoreLikely more_likely{probs};
  double mass = 0.0;
  size_t sorted = 0;
  for (size_t chunk = kNucleusFirstChunk;; chunk *= 2) {
    // Once the head would be half of `kept`, one full sort is cheaper.
    const size_t end = 2 * (sorted + chunk) < kept.size() ? sorted + chunk : kept.size();
    const auto first = kept.begin() + static_cast<std::ptrdiff_t>(sorted);
    const auto last = kept.begin() + static_cast<std::ptrdiff_t>(end);
    if (end < kept.size()) std::nth_element(first, last, kept.end(), more_likely);
    std::sort(first, last, more_likely);
    for (; sorted < end; ++sorted) {
      mass += probs[kept[sorted]];
      if (mass >= target) return sorted + 1;
    }
    // Rounding can leave the whole set just short of target: keep it all.
    if (end == kept.size()) return kept.size();
  }
}

bool valid_temperature(float temperature) { return std::isfinite(temperature) && temperature >= 0.0f; }

}  // namespace

void check_temperature(float temperature, const std::string& name) {
  SEED_CHECK(valid_temperature(temperature), kInvalidArgument)
      << name << ": " << temperature
      << (std::isfinite(temperature) ? " is negative; expected 0 or more (0: greedy)" : " is not a finite number");
}

void SamplingParams::validate(const std::function<std::string(const std::string& field)>& name) const {
  const auto named = [&name](const std::string& field) { return name ? name(field) : field; };
  // Every sampled token validates its params: names are built for an error only.
  if (!valid_temperature(temperature)) check_temperature(temperature, named("temperature"));
  SEED_CHECK(top_k >= 0, kInvalidArgument)
      << named("top_k") << ": " << top_k << " is negative; expected 0 or more (0: all tokens)";
  SEED_CHECK(top_p > 0.0f && top_p <= 1.0f, kInvalidArgument)
      << named("top_p") << ": expected a value in (0, 1] (1: all tokens), got " << top_p;
}

int32_t argmax(const float* logits, int64_t vocab) {
  // Two passes that vectorise (the max, then its first index) rather than
  // one in which every step waits on the last comparison.
  float best = logits[0];
  for (int64_t i = 1; i < vocab; ++i) best = std::max(best, logits[i]);
  return static_cast<int32_t>(std::find(logits, logits + vocab, best) - logits);
}

void sampling_distribution(const float* logits, int64_t vocab, const SamplingParams& params,
                           float* probs) {
  params.validate();
  const int32_t best = checked_argmax(logits, vocab);
  if (params.greedy()) {
    std::fill(probs, probs + vocab, 0.0f);
    probs[best] = 1.0f;
    return;
  }

  // Subtracting the max keeps exp() in (0, 1]; dividing (rather than
  // multiplying by 1/t) keeps the max at exactly 0 for tiny temperatures.
  exp_of_scaled(logits, vocab, logits[best], params.temperature, probs);

  const bool cut_k = params.top_k > 0 && params.top_k < vocab;
  const bool cut_p = params.top_p < 1.0f;
  if (!cut_k && !cut_p) {
    const float scale = static_cast<float>(1.0 / positive_mass(probs, vocab));
    for (int64_t i = 0; i < vocab; ++i) probs[i] *= scale;
    return;
  }

  // Dropped tokens are zeroed as they leave `kept`; the rest renormalise.
  std::vector<int32_t> kept(static_cast<size_t>(vocab));
  std::iota(kept.begin(), kept.end(), 0);
  const auto keep_first = [&kept, probs](size_t n) {
    for (size_t j = n; j < kept.size(); ++j) probs[kept[j]] = 0.0f;
    kept.resize(n);
  };
  if (cut_k) {
    std::nth_element(kept.begin(), kept.begin() + params.top_k, kept.end(), MoreLikely{probs});
    keep_first(static_cast<size_t>(params.top_k));
  }
  if (cut_p) keep_first(nucleus_size(kept, probs, params.top_p));

  double total = 0.0;
  for (const int32_t id : kept) total += probs[id];
  for (const int32_t id : kept) probs[id] = static_cast<float>(probs[id] / total);
}

SoftmaxScale softmax_scale(const float* logits, int64_t vocab, float temperature) {
  SEED_CHECK(temperature > 0.0f && std::isfinite(temperature), kInvalidArgument)
      << "softmax_scale needs a finite temperature > 0, got " << temperature;
  SoftmaxScale s;
  s.argmax = checked_argmax(logits, vocab);
  s.max_logit = logits[s.argmax];
  s.scale = static_cast<float>(1.0 / scaled_exp_mass(logits, vocab, s.max_logit, temperature));
  return s;
}

float softmax_prob(const float* logits, const SoftmaxScale& scale, float temperature, int32_t token) {
  return exp_nonpositive((logits[token] - scale.max_logit) / temperature) * scale.scale;
}

int32_t sample_from(const float* probs, int64_t vocab, double u) {
  check_vocab(vocab);
  SEED_CHECK(u >= 0.0 && u < 1.0, kInvalidArgument) << "u must be in [0, 1), got " << u;
  // NaN is not skipped: it poisons the total.
  const double total = positive_mass(probs, vocab);
  SEED_CHECK(total > 0.0 && std::isfinite(total), kInvalidArgument)
      << "probabilities over " << vocab << " tokens sum to " << total << "; nothing to draw";
  const double target = u * total;
  double cumulative = 0.0;
  int32_t last_nonzero = -1;
  for (int64_t i = 0; i < vocab; ++i) {
    if (probs[i] <= 0.0f) continue;
    cumulative += probs[i];
    last_nonzero = static_cast<int32_t>(i);
    if (cumulative > target) return last_nonzero;
  }
  // The running sum can end a rounding short of `total` (summed in another
  // order); the draw as u -> 1 is the last token with mass.
  return last_nonzero;
}

namespace {

// race_from over `count` weights, weight i that of token token_of(i)
// (increasing in i, so ties still go to the lower token).
template <typename TokenOf>
int32_t race_over(const float* weights, int64_t count, uint64_t stream, TokenOf token_of) {
  check_vocab(count);
  // -log(u) >= 1 - u: a token whose 1 - u is already over the best ratio
  // times its weight cannot win, which spares the log of nearly every token
  // of a long tail.
  double best = std::numeric_limits<double>::infinity();
  int32_t winner = -1;
  for (int64_t v = 0; v < count; ++v) {
    const double w = weights[v];
    if (!(w > 0.0) || std::isinf(w)) continue;
    const double u = token_uniform(stream, token_of(v));
    if (1.0 - u >= best * w) continue;
    const double ratio = -std::log(u) / w;
    if (ratio < best) {
      best = ratio;
      winner = static_cast<int32_t>(v);
    }
  }
  SEED_CHECK(winner >= 0, kInvalidArgument) << "no positive finite weight among " << count << " tokens; nothing to draw";
  return winner;
}

}  // namespace

int32_t race_from(const float* weights, int64_t vocab, uint64_t stream) {
  return race_over(weights, vocab, stream, [](int64_t v) { return v; });
}

int32_t race_from(const float* weights, const int64_t* tokens, int64_t count, uint64_t stream) {
  return race_over(weights, count, stream, [tokens](int64_t i) { return tokens[i]; });
}

}  // namespace seed
