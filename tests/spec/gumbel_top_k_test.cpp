// Gumbel-top-k draws distinct tokens in the order sequential sampling
// without replacement does: chi-square over ordered pairs and triples.
#include "spec/api/gumbel_top_k.h"

#include <gtest/gtest.h>

#include "models/base/counter_rng.h"
#include "tests/spec/chi_square.h"

namespace seed::spec {
namespace {

// P(x_1, ..., x_m) of sequential sampling without replacement from q.
double sequential_probability(const std::vector<float>& q, const std::vector<int>& order) {
  double p = 1.0, left = 1.0;
  for (const int x : order) {
    p *= q[static_cast<size_t>(x)] / left;
    left -= q[static_cast<size_t>(x)];
  }
  return p;
}

TEST(GumbelTopKTest, OrderedDrawsMatchSequentialSamplingWithoutReplacement) {
  const std::vector<float> q = {0.4f, 0.25f, 0.15f, 0.1f, 0.07f, 0.03f, 0.0f};
  const int v = static_cast<int>(q.size());
  constexpr int kTrials = 200000;
  for (const int m : {2, 3}) {
    std::vector<int64_t> counts(static_cast<size_t>(m == 2 ? v * v : v * v * v), 0);
    std::vector<double> uniforms(q.size());
    for (int t = 0; t < kTrials; ++t) {
      for (size_t i = 0; i < q.size(); ++i) {
        uniforms[i] = uniform({7, static_cast<uint64_t>(t), 0, RngPurpose::kDraft, static_cast<uint32_t>(i)});
      }
      const std::vector<int> got = gumbel_top_k(q, uniforms, m);
      ASSERT_EQ(got.size(), static_cast<size_t>(m));
      size_t cell = 0;
      for (const int x : got) {
        ASSERT_GT(q[static_cast<size_t>(x)], 0.0f) << "drew a zero-probability entry";
        cell = cell * static_cast<size_t>(v) + static_cast<size_t>(x);
      }
      ++counts[cell];
    }
    std::vector<double> expected(counts.size(), 0.0);
    for (size_t cell = 0; cell < counts.size(); ++cell) {
      std::vector<int> order;
      for (size_t c = cell, k = 0; k < static_cast<size_t>(m); ++k, c /= static_cast<size_t>(v)) {
        order.insert(order.begin(), static_cast<int>(c % static_cast<size_t>(v)));
      }
      bool distinct = true;
      for (size_t a = 0; a < order.size(); ++a) {
        for (size_t b = a + 1; b < order.size(); ++b) distinct = distinct && order[a] != order[b];
      }
      if (distinct) expected[cell] = sequential_probability(q, order);
    }
    const auto fit = ::seed::testing::chi_square(counts, expected, kTrials);
    EXPECT_GT(fit.p_value, 1e-3) << "m = " << m << ": chi-square " << fit.statistic << " (" << fit.dof << " dof)";
  }
}

TEST(GumbelTopKTest, NeverReturnsMoreThanThePositiveEntries) {
  const std::vector<float> q = {0.0f, 0.5f, 0.0f, 0.5f};
  const std::vector<double> u = {0.1, 0.2, 0.3, 0.4};
  const std::vector<int> got = gumbel_top_k(q, u, 4);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_NE(got[0], got[1]);
  EXPECT_TRUE(gumbel_top_k(q, u, 0).empty());
}

}  // namespace
}  // namespace seed::spec
