// Sampling distribution, inverse-CDF and race draws and the counter RNG,
// including chi-square checks that draws follow the distribution they claim.
#include "models/base/sampling.h"

#include <gtest/gtest.h>

#include <boost/math/distributions/chi_squared.hpp>
#include <cmath>
#include <cstdio>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "models/base/counter_rng.h"
#include "models/base/error.h"
#include "tests/throws_error.h"

namespace seed {
namespace {

using ::seed::testing::throws_error;

constexpr float kNegInf = -std::numeric_limits<float>::infinity();
constexpr float kTolerance = 1e-6f;
// Chi-square tests fail only if the fit is worse than 1 run in 1000.
constexpr double kMinPValue = 1e-3;

std::vector<float> distribution(const std::vector<float>& logits, const SamplingParams& params) {
  std::vector<float> probs(logits.size(), -1.0f);
  sampling_distribution(logits.data(), static_cast<int64_t>(logits.size()), params, probs.data());
  return probs;
}

// Logits whose softmax at temperature 1 is exactly `probs`.
std::vector<float> logits_of(const std::vector<double>& probs) {
  std::vector<float> logits;
  for (const double p : probs) logits.push_back(static_cast<float>(std::log(p)));
  return logits;
}

void expect_probs(const std::vector<float>& actual, const std::vector<double>& expected) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    EXPECT_NEAR(actual[i], expected[i], kTolerance) << "token " << i;
  }
}

// Pearson's chi-square statistic over the categories with expected mass,
// and its p-value; any count in a zero-mass category fails the test.
double chi_square_p_value(const std::vector<int64_t>& counts, const std::vector<double>& expected,
                          int64_t draws) {
  double statistic = 0.0;
  int categories = 0;
  for (size_t i = 0; i < counts.size(); ++i) {
    if (expected[i] == 0.0) {
      EXPECT_EQ(counts[i], 0) << "drew token " << i << ", which has probability 0";
      continue;
    }
    const double want = expected[i] * static_cast<double>(draws);
    const double miss = static_cast<double>(counts[i]) - want;
    statistic += miss * miss / want;
    ++categories;
  }
  const boost::math::chi_squared chi_squared(categories - 1);
  return boost::math::cdf(boost::math::complement(chi_squared, statistic));
}

TEST(SamplingParamsTest, DefaultsAreValid) { EXPECT_NO_THROW(SamplingParams{}.validate()); }

TEST(SamplingParamsTest, ValidateNamesTheBadField) {
  const auto message_of = [](const SamplingParams& params) -> std::string {
    try {
      params.validate();
    } catch (const Error& error) {
      EXPECT_EQ(error.kind(), ErrorKind::kInvalidArgument);
      return error.what();
    }
    return "(no error)";
  };
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_NE(message_of({nan, 0, 1.0f}).find("temperature"), std::string::npos);
  EXPECT_NE(message_of({inf, 0, 1.0f}).find("temperature"), std::string::npos);
  EXPECT_NE(message_of({1.0f, -1, 1.0f}).find("top_k"), std::string::npos);
  EXPECT_NE(message_of({1.0f, 0, 0.0f}).find("top_p"), std::string::npos);
  EXPECT_NE(message_of({1.0f, 0, 1.5f}).find("top_p"), std::string::npos);
  EXPECT_NE(message_of({1.0f, 0, nan}).find("top_p"), std::string::npos);
}

// A negative temperature is an error, not another way to say greedy.
TEST(SamplingParamsTest, NegativeTemperatureIsRefused) {
  EXPECT_NO_THROW(SamplingParams({0.0f, 0, 1.0f}).validate());
  EXPECT_TRUE(throws_error([] { SamplingParams({-1.0f, 0, 1.0f}).validate(); }, ErrorKind::kInvalidArgument,
                           {"temperature: -1 is negative"}));
  EXPECT_TRUE(throws_error([] { check_temperature(-0.5f, "--temperatures"); }, ErrorKind::kInvalidArgument,
                           {"--temperatures: -0.5 is negative"}));
}

TEST(SamplingParamsTest, ValidateNamesTheFieldAsTheCallerCallsIt) {
  const auto flag = [](const std::string& field) { return "--" + field; };
  EXPECT_TRUE(throws_error([&] { SamplingParams({1.0f, 0, 2.0f}).validate(flag); }, ErrorKind::kInvalidArgument,
                           {"--top_p: expected a value in (0, 1]", "got 2"}));
  EXPECT_TRUE(throws_error([&] { SamplingParams({1.0f, -3, 1.0f}).validate(flag); }, ErrorKind::kInvalidArgument,
                           {"--top_k: -3 is negative"}));
}

TEST(SamplingTest, ArgmaxTieGoesToLowestId) {
  const std::vector<float> logits = {1.0f, 3.0f, 2.0f, 3.0f};
  EXPECT_EQ(argmax(logits.data(), 4), 1);
}

TEST(SamplingTest, GreedyIsOneHotOnArgmax) {
  const std::vector<float> logits = {0.5f, 3.0f, kNegInf, 3.0f, -2.0f};
  expect_probs(distribution(logits, {0.0f, 0, 1.0f}), {0, 1, 0, 0, 0});
  // Greedy ignores top-k and top-p.
  expect_probs(distribution(logits, {0.0f, 2, 0.1f}), {0, 1, 0, 0, 0});
}

TEST(SamplingTest, TemperatureDividesLogitsBeforeSoftmax) {
  const std::vector<float> logits = {1.0f, 2.0f, 3.0f, 0.0f};
  const double temperature = 0.5;
  std::vector<double> expected;
  double total = 0.0;
  for (const float logit : logits) {
    expected.push_back(std::exp(logit / temperature));
    total += expected.back();
  }
  for (double& p : expected) p /= total;
  expect_probs(distribution(logits, {0.5f, 0, 1.0f}), expected);
}

TEST(SamplingTest, TopKKeepsKMostLikelyAndRenormalises) {
  const auto logits = logits_of({0.1, 0.4, 0.2, 0.3});
  expect_probs(distribution(logits, {1.0f, 2, 1.0f}), {0, 4.0 / 7, 0, 3.0 / 7});
  // k >= vocab keeps everything.
  expect_probs(distribution(logits, {1.0f, 9, 1.0f}), {0.1, 0.4, 0.2, 0.3});
}

TEST(SamplingTest, TopKTieAtTheCutGoesToLowerIds) {
  expect_probs(distribution({0, 0, 0, 0}, {1.0f, 2, 1.0f}), {0.5, 0.5, 0, 0});
}

TEST(SamplingTest, TopPKeepsSmallestPrefixReachingTopP) {
  const auto logits = logits_of({0.1, 0.4, 0.2, 0.3});
  expect_probs(distribution(logits, {1.0f, 0, 0.6f}), {0, 4.0 / 7, 0, 3.0 / 7});
  expect_probs(distribution(logits, {1.0f, 0, 0.75f}), {0, 4.0 / 9, 2.0 / 9, 3.0 / 9});
}

TEST(SamplingTest, TopPStopsWhereMassExactlyReachesTopP) {
  // Four equal tokens: 0.25 each, exactly representable, ties by lower id.
  expect_probs(distribution({0, 0, 0, 0}, {1.0f, 0, 0.5f}), {0.5, 0.5, 0, 0});
  expect_probs(distribution({0, 0, 0, 0}, {1.0f, 0, 0.75f}), {1.0 / 3, 1.0 / 3, 1.0 / 3, 0});
}

TEST(SamplingTest, TopPAlwaysKeepsAtLeastOneToken) {
  const auto logits = logits_of({0.1, 0.4, 0.2, 0.3});
  expect_probs(distribution(logits, {1.0f, 0, 1e-6f}), {0, 1, 0, 0});
}

TEST(SamplingTest, TopPAppliesToTheMassLeftByTopK) {
  // After top-3 the masses are 4/9, 3/9, 2/9: 7/9 >= 0.75 stops at two
  // tokens (against the unrenormalised 0.7 it would take three).
  const auto logits = logits_of({0.1, 0.4, 0.2, 0.3});
  expect_probs(distribution(logits, {1.0f, 3, 0.75f}), {0, 4.0 / 7, 0, 3.0 / 7});
}

TEST(SamplingTest, NegativeInfinityLogitsGetZeroProbability) {
  const std::vector<float> logits = {kNegInf, 1.0f, kNegInf, 1.0f, kNegInf};
  for (const SamplingParams& params :
       {SamplingParams{1.0f, 0, 1.0f}, SamplingParams{0.3f, 4, 1.0f},
        SamplingParams{2.0f, 0, 0.99f}, SamplingParams{1.0f, 4, 0.9f}}) {
    expect_probs(distribution(logits, params), {0, 0.5, 0, 0.5, 0});
  }
}

TEST(SamplingTest, RejectsLogitsNoDistributionComesFrom) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (const std::vector<float>& logits : std::vector<std::vector<float>>{
           {kNegInf, kNegInf}, {0.0f, nan}, {0.0f, std::numeric_limits<float>::infinity()}}) {
    try {
      distribution(logits, {});
      ADD_FAILURE() << "accepted logits " << logits[0] << ", " << logits[1];
    } catch (const Error& error) {
      EXPECT_EQ(error.kind(), ErrorKind::kInvalidArgument);
    }
  }
}

TEST(SamplingTest, SmallTemperatureApproachesGreedy) {
  expect_probs(distribution({1.0f, 1.5f, 0.0f}, {1e-30f, 0, 1.0f}), {0, 1, 0});
}

TEST(SamplingTest, LargeVocabularyStaysNormalised) {
  const int64_t vocab = 256000;
  std::vector<float> logits(vocab);
  for (int64_t i = 0; i < vocab; ++i) logits[i] = static_cast<float>((i * 7919) % 1000) / 100.0f;
  for (const SamplingParams& params :
       {SamplingParams{1.0f, 0, 1.0f}, SamplingParams{0.8f, 50, 1.0f},
        SamplingParams{1.0f, 0, 0.9f}}) {
    const auto probs = distribution(logits, params);
    double total = 0.0;
    int64_t kept = 0;
    for (const float p : probs) {
      total += p;
      kept += p > 0.0f;
    }
    EXPECT_NEAR(total, 1.0, 1e-4);
    if (params.top_k > 0) {
      EXPECT_EQ(kept, params.top_k);
    }
  }
}

TEST(SampleFromTest, InverseCdfPicksTheBucketOfU) {
  const std::vector<float> probs = {0.25f, 0.5f, 0.25f};
  EXPECT_EQ(sample_from(probs.data(), 3, 0.0), 0);
  EXPECT_EQ(sample_from(probs.data(), 3, 0.24), 0);
  EXPECT_EQ(sample_from(probs.data(), 3, 0.25), 1);
  EXPECT_EQ(sample_from(probs.data(), 3, 0.74), 1);
  EXPECT_EQ(sample_from(probs.data(), 3, 0.75), 2);
}

TEST(SampleFromTest, NeverReturnsZeroProbabilityToken) {
  const std::vector<float> probs = {0.0f, 0.5f, 0.0f, 0.5f, 0.0f, 0.0f};
  const double almost_one = 1.0 - 1e-16;
  ASSERT_LT(almost_one, 1.0);
  EXPECT_EQ(sample_from(probs.data(), 6, 0.0), 1);
  EXPECT_EQ(sample_from(probs.data(), 6, almost_one), 3);
  // Unnormalised float masses that do not sum to 1.
  const std::vector<float> uneven = {0.0f, 0.1f, 0.7f, 0.0f};
  EXPECT_EQ(sample_from(uneven.data(), 4, 0.0), 1);
  EXPECT_EQ(sample_from(uneven.data(), 4, almost_one), 2);
}

TEST(SampleFromTest, RejectsBadInput) {
  const std::vector<float> zeros = {0.0f, 0.0f};
  const std::vector<float> probs = {0.5f, 0.5f};
  EXPECT_THROW(sample_from(zeros.data(), 2, 0.5), Error);
  EXPECT_THROW(sample_from(probs.data(), 2, 1.0), Error);
  EXPECT_THROW(sample_from(probs.data(), 2, -0.1), Error);
}

TEST(CounterRngTest, SameKeyGivesSameUniform) {
  const RngKey key{42, 7, 100, RngPurpose::kAccept, 3};
  EXPECT_EQ(uniform(key), uniform(key));
}

TEST(CounterRngTest, EachKeyFieldSelectsADifferentStream) {
  const RngKey base{42, 7, 100, RngPurpose::kSample, 0};
  std::vector<RngKey> keys = {base};
  keys.push_back(base);
  keys.back().seed = 43;
  keys.push_back(base);
  keys.back().request = 8;
  keys.push_back(base);
  keys.back().request = 7 + (uint64_t{1} << 32);  // high half of the request id
  keys.push_back(base);
  keys.back().position = 101;
  keys.push_back(base);
  keys.back().purpose = RngPurpose::kDraft;
  keys.push_back(base);
  keys.back().index = 1;
  std::set<double> values;
  for (const RngKey& key : keys) values.insert(uniform(key));
  EXPECT_EQ(values.size(), keys.size());
}

TEST(CounterRngTest, UniformsLieInHalfOpenUnitInterval) {
  for (uint32_t position = 0; position < 100000; ++position) {
    const double u = uniform({1, 2, position, RngPurpose::kSample, 0});
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
  }
}

TEST(CounterRngTest, UniformsPassChiSquareOverTwentyBins) {
  constexpr int kBins = 20;
  constexpr int64_t kDraws = 200000;
  std::vector<int64_t> counts(kBins, 0);
  for (int64_t i = 0; i < kDraws; ++i) {
    const double u = uniform({2024, static_cast<uint64_t>(i), 0, RngPurpose::kSample, 0});
    ++counts[static_cast<size_t>(u * kBins)];
  }
  const double p = chi_square_p_value(counts, std::vector<double>(kBins, 1.0 / kBins), kDraws);
  std::printf("uniform chi-square over %d bins: p = %.4f\n", kBins, p);
  EXPECT_GT(p, kMinPValue);
}

TEST(CounterRngTest, TokenUniformsLieInTheOpenUnitIntervalAndPassChiSquare) {
  constexpr int kBins = 20;
  constexpr int64_t kTokens = 200000;
  // Along one stream's tokens, and one token's value along streams.
  std::vector<int64_t> along_tokens(kBins, 0), along_streams(kBins, 0);
  const uint64_t stream = stream_bits({2024, 3, 17, RngPurpose::kResample, 0});
  for (int64_t v = 0; v < kTokens; ++v) {
    const double u = token_uniform(stream, v);
    ASSERT_GT(u, 0.0);
    ASSERT_LT(u, 1.0);
    ++along_tokens[static_cast<size_t>(u * kBins)];
    const uint64_t other = stream_bits({2024, 3, static_cast<uint32_t>(v), RngPurpose::kResample, 0});
    ++along_streams[static_cast<size_t>(token_uniform(other, 5) * kBins)];
  }
  const std::vector<double> flat(kBins, 1.0 / kBins);
  EXPECT_GT(chi_square_p_value(along_tokens, flat, kTokens), kMinPValue);
  EXPECT_GT(chi_square_p_value(along_streams, flat, kTokens), kMinPValue);
}

TEST(RaceFromTest, WinnersFollowTheWeights) {
  const std::vector<float> logits = {1.2f, -0.3f, 2.0f, 0.4f, kNegInf, 0.9f, -1.5f, 1.6f, 0.1f, -0.8f};
  const auto probs = distribution(logits, SamplingParams{0.7f, 6, 1.0f});
  std::vector<float> scaled;  // the same weights, not normalised
  for (const float p : probs) scaled.push_back(p * 3.7f);
  constexpr int64_t kDraws = 200000;
  std::vector<int64_t> counts(logits.size(), 0);
  for (int64_t i = 0; i < kDraws; ++i) {
    const uint64_t stream = stream_bits({7, static_cast<uint64_t>(i), 0, RngPurpose::kResample, 0});
    const int32_t token = race_from(probs.data(), static_cast<int64_t>(probs.size()), stream);
    ASSERT_GT(probs[static_cast<size_t>(token)], 0.0f);
    if (i < 2000) {
      ASSERT_EQ(race_from(scaled.data(), static_cast<int64_t>(scaled.size()), stream), token);
    }
    ++counts[static_cast<size_t>(token)];
  }
  std::vector<double> expected(probs.begin(), probs.end());
  const double p = chi_square_p_value(counts, expected, kDraws);
  std::printf("raced tokens chi-square (T 0.7, top-k 6, 5 dof): p = %.4f\n", p);
  EXPECT_GT(p, kMinPValue);
}

// race_from skips the log of tokens that cannot win; its winner is the
// plain argmin of every token's ratio, over a long-tailed vocabulary.
TEST(RaceFromTest, TheShortcutPicksThePlainArgmin) {
  constexpr int64_t kVocab = 5000;
  std::vector<float> weights(kVocab);
  for (int64_t v = 0; v < kVocab; ++v) {
    const double u = uniform({9, 0, static_cast<uint32_t>(v), RngPurpose::kSample, 0});
    weights[static_cast<size_t>(v)] = v % 97 == 0 ? 0.0f : static_cast<float>(std::exp(-12.0 * u));
  }
  for (uint32_t i = 0; i < 500; ++i) {
    const uint64_t stream = stream_bits({9, 1, i, RngPurpose::kResample, 0});
    int32_t plain = -1;
    double best = std::numeric_limits<double>::infinity();
    for (int64_t v = 0; v < kVocab; ++v) {
      if (weights[static_cast<size_t>(v)] <= 0.0f) continue;
      const double ratio = -std::log(token_uniform(stream, v)) / weights[static_cast<size_t>(v)];
      if (ratio < best) {
        best = ratio;
        plain = static_cast<int32_t>(v);
      }
    }
    ASSERT_EQ(race_from(weights.data(), kVocab, stream), plain) << "stream " << i;
  }
}

// The coupling: racing two distributions on one stream gives the same
// winner with probability at least (1 - TV) / (1 + TV), however far apart
// in the vocabulary their mass lies; an independent draw from q agrees
// only sum(p q) of the time.
TEST(RaceFromTest, CloseDistributionsOftenShareTheirWinner) {
  constexpr int64_t kVocab = 256;
  std::vector<float> p(kVocab), q(kVocab);
  double p_mass = 0.0, q_mass = 0.0;
  for (int64_t v = 0; v < kVocab; ++v) {
    const double u = uniform({11, 0, static_cast<uint32_t>(v), RngPurpose::kSample, 0});
    const double w = std::exp(-6.0 * u);
    p[static_cast<size_t>(v)] = static_cast<float>(w);
    q[static_cast<size_t>(v)] = static_cast<float>(w * (v % 3 == 0 ? 1.6 : 0.8));
    p_mass += p[static_cast<size_t>(v)];
    q_mass += q[static_cast<size_t>(v)];
  }
  double tv = 0.0, overlap_of_independent = 0.0;
  for (int64_t v = 0; v < kVocab; ++v) {
    tv += 0.5 * std::abs(p[static_cast<size_t>(v)] / p_mass - q[static_cast<size_t>(v)] / q_mass);
    overlap_of_independent += p[static_cast<size_t>(v)] / p_mass * q[static_cast<size_t>(v)] / q_mass;
  }
  constexpr int kRaces = 20000;
  int agree = 0;
  for (uint32_t i = 0; i < kRaces; ++i) {
    const uint64_t stream = stream_bits({11, 2, i, RngPurpose::kResample, 0});
    agree += race_from(p.data(), kVocab, stream) == race_from(q.data(), kVocab, stream);
  }
  const double rate = static_cast<double>(agree) / kRaces;
  const double bound = (1.0 - tv) / (1.0 + tv);
  std::printf("coupled races agree %.3f of the time; TV %.3f, bound %.3f, independent draws %.3f\n", rate, tv,
              bound, overlap_of_independent);
  EXPECT_GT(rate, bound - 4.0 * std::sqrt(bound * (1.0 - bound) / kRaces));
  EXPECT_GT(bound, 5.0 * overlap_of_independent);
}

// A race over some of the vocabulary's tokens (a draft head's columns)
// has the winner of the whole vocabulary's race with zero weight elsewhere.
TEST(RaceFromTest, ARaceOverSomeTokensHasTheWholeVocabularysWinner) {
  constexpr int64_t kVocab = 3000;
  std::vector<int64_t> tokens;
  std::vector<float> columns, whole(kVocab, 0.0f);
  for (int64_t v = 5; v < kVocab; v += 7) {
    const double u = uniform({13, 0, static_cast<uint32_t>(v), RngPurpose::kSample, 0});
    tokens.push_back(v);
    columns.push_back(static_cast<float>(std::exp(-8.0 * u)));
    whole[static_cast<size_t>(v)] = columns.back();
  }
  int moved = 0;  // races whose winner's column is not its token
  for (uint32_t i = 0; i < 500; ++i) {
    const uint64_t stream = stream_bits({13, 1, i, RngPurpose::kResample, 0});
    const int32_t column = race_from(columns.data(), tokens.data(), static_cast<int64_t>(tokens.size()), stream);
    ASSERT_EQ(tokens[static_cast<size_t>(column)], race_from(whole.data(), kVocab, stream)) << "stream " << i;
    moved += column != race_from(columns.data(), static_cast<int64_t>(columns.size()), stream);
  }
  // Keyed by column instead, the winners would be another race's.
  EXPECT_GT(moved, 400);
}

TEST(RaceFromTest, RejectsRowsWithoutWeight) {
  const std::vector<float> zeros = {0.0f, 0.0f, -1.0f};
  EXPECT_THROW(race_from(zeros.data(), 3, 42), Error);
  EXPECT_THROW(race_from(zeros.data(), 0, 42), Error);
}

TEST(SamplingChiSquareTest, DrawsFollowTemperatureTopKDistribution) {
  const std::vector<float> logits = {1.2f, -0.3f, 2.0f, 0.4f, kNegInf,
                                     0.9f, -1.5f, 1.6f, 0.1f, -0.8f};
  const SamplingParams params{0.7f, 6, 1.0f};
  // By hand: the six largest logits are ids 2, 7, 0, 5, 3, 8.
  const std::vector<int> top6 = {2, 7, 0, 5, 3, 8};
  std::vector<double> expected(logits.size(), 0.0);
  double total = 0.0;
  for (const int id : top6) total += std::exp(logits[id] / 0.7);
  for (const int id : top6) expected[id] = std::exp(logits[id] / 0.7) / total;
  const auto probs = distribution(logits, params);
  expect_probs(probs, expected);

  constexpr int64_t kDraws = 200000;
  std::vector<int64_t> counts(logits.size(), 0);
  for (int64_t i = 0; i < kDraws; ++i) {
    const double u = uniform({7, static_cast<uint64_t>(i), 0, RngPurpose::kSample, 0});
    ++counts[sample_from(probs.data(), static_cast<int64_t>(probs.size()), u)];
  }
  const double p = chi_square_p_value(counts, expected, kDraws);
  std::printf("sampled tokens chi-square (T 0.7, top-k 6, 5 dof): p = %.4f\n", p);
  EXPECT_GT(p, kMinPValue);
}

}  // namespace
}  // namespace seed
