// TargetRows: p at single tokens equals the dense transformation bit for
// bit (temperature, top-k, top-p, greedy), rows are computed only on
// demand, and bad arguments or logits are errors naming them.
#include "spec/api/target_rows.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "models/base/counter_rng.h"
#include "models/base/error.h"
#include "tests/throws_error.h"

namespace seed::spec {
namespace {

using ::seed::testing::throws_error;

// Three rows of logits over a vocabulary that is not a multiple of 8 (the
// mass is summed in eight lanes), with masked tokens and ties.
constexpr int64_t kVocab = 1003;
std::vector<float> logits() {
  std::vector<float> rows(3 * kVocab);
  for (size_t i = 0; i < rows.size(); ++i) {
    rows[i] = static_cast<float>(12.0 * uniform({5, 0, static_cast<uint32_t>(i), RngPurpose::kDraft, 0}) - 6.0);
  }
  rows[17] = -std::numeric_limits<float>::infinity();
  rows[kVocab + 4] = rows[kVocab + 5];
  return rows;
}

TEST(TargetRowsTest, ProbabilitiesEqualTheDenseRowBitForBit) {
  const std::vector<float> rows = logits();
  for (const SamplingParams params : {SamplingParams{1.0f}, SamplingParams{0.7f}, SamplingParams{1.3f, 40},
                                      SamplingParams{0.9f, 0, 0.8f}, SamplingParams{1.0f, 100, 0.5f},
                                      SamplingParams{0.0f}}) {
    TargetRows target(rows.data(), 3, kVocab, params);
    std::vector<float> dense(kVocab);
    for (int64_t c = 0; c < 3; ++c) {
      sampling_distribution(rows.data() + c * kVocab, kVocab, params, dense.data());
      for (int32_t v = 0; v < kVocab; ++v) {
        ASSERT_EQ(target.prob(c, v), dense[static_cast<size_t>(v)])
            << "T " << params.temperature << " top-k " << params.top_k << " top-p " << params.top_p << " context "
            << c << " token " << v;
      }
      const float* row = target.row(c);
      for (int32_t v = 0; v < kVocab; ++v) ASSERT_EQ(row[v], dense[static_cast<size_t>(v)]);
      EXPECT_EQ(target.argmax(c), argmax(dense.data(), kVocab));
    }
  }
}

TEST(TargetRowsTest, ContextsNeverReadCostNothingAndBadLogitsThereAreNotSeen) {
  std::vector<float> rows = logits();
  rows[2 * kVocab + 9] = std::nanf("");  // context 2 is never read
  TargetRows target(rows.data(), 3, kVocab, SamplingParams{});
  EXPECT_GT(target.prob(0, 3), 0.0f);
  EXPECT_TRUE(throws_error([&] { target.prob(2, 3); }, ErrorKind::kInvalidArgument, {"logit 9", "non-finite"}));
}

TEST(TargetRowsTest, BadArgumentsAreErrorsNamingThem) {
  const std::vector<float> rows = logits();
  EXPECT_TRUE(throws_error([&] { TargetRows(nullptr, 3, kVocab, {}); }, ErrorKind::kInvalidArgument, {"null"}));
  EXPECT_TRUE(throws_error([&] { TargetRows(rows.data(), 0, kVocab, {}); }, ErrorKind::kInvalidArgument,
                           {"0 contexts"}));
  EXPECT_TRUE(throws_error([&] { TargetRows(rows.data(), 3, 0, {}); }, ErrorKind::kInvalidArgument, {"vocab"}));
  EXPECT_TRUE(throws_error([&] { TargetRows(rows.data(), 3, kVocab, SamplingParams{1.0f, -1}); },
                           ErrorKind::kInvalidArgument, {"top_k"}));
  TargetRows target(rows.data(), 3, kVocab, {});
  EXPECT_TRUE(throws_error([&] { target.prob(3, 0); }, ErrorKind::kInvalidArgument, {"context 3"}));
  EXPECT_TRUE(throws_error([&] { target.prob(0, kVocab); }, ErrorKind::kInvalidArgument, {"token 1003"}));
}

}  // namespace
}  // namespace seed::spec
