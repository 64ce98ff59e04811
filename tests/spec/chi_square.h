// Pearson's chi-square goodness of fit, for the losslessness tests.
#pragma once

#include <boost/math/distributions/chi_squared.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace seed::testing {

// Pearson's chi-square statistic of `counts` against `expected`
// probabilities, and its p-value. A count in a zero-probability category is
// an impossible outcome: statistic inf, p = 0.
struct ChiSquare {
  double statistic = 0.0;
  int dof = 0;
  double p_value = 0.0;
};

inline ChiSquare chi_square(const std::vector<int64_t>& counts, const std::vector<double>& expected,
                     int64_t trials) {
  ChiSquare result;
  int categories = 0;
  for (size_t i = 0; i < counts.size(); ++i) {
    if (expected[i] == 0.0) {
      if (counts[i] != 0) result.statistic = std::numeric_limits<double>::infinity();
      continue;
    }
    const double want = expected[i] * static_cast<double>(trials);
    const double miss = static_cast<double>(counts[i]) - want;
    result.statistic += miss * miss / want;
    ++categories;
  }
  result.dof = categories - 1;
  if (std::isfinite(result.statistic)) {
    const boost::math::chi_squared distribution(result.dof);
    result.p_value = boost::math::cdf(boost::math::complement(distribution, result.statistic));
  }
  return result;
}

}  // namespace seed::testing
