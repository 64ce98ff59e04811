// Logits summarised where they are (as on a GPU; here on the CPU): the
// verifier reaches the verdicts it reaches from the host rows, reads p at
// drafted tokens from the summary, copies a row only for a rejection, the
// bonus draw of a sampled context or a top-k/top-p threshold, and names a
// row no distribution can come from and a draft node outside the rows.
#include "spec/engine/logit_summary.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <limits>
#include <vector>

#include "models/base/counter_rng.h"
#include "models/base/error.h"
#include "tests/throws_error.h"

namespace seed::spec {
namespace {

using ::seed::testing::throws_error;

constexpr int64_t kVocab = 1003;  // not a multiple of a vector width

// A draft of six nodes: two chains from the prefix and a branch.
DraftTree tree_with(const std::vector<int32_t>& tokens) {
  DraftTree draft;
  draft.tokens = tokens;
  draft.parents = {-1, 0, 1, 0, -1, 4};
  draft.deterministic = true;
  return draft;
}

// Rows of uniform logits in [-6, 6), each with a peak: the verifier then
// accepts some drafted tokens (those at a peak) and rejects others.
at::Tensor peaked_logits(int64_t rows, uint64_t seed) {
  at::Tensor logits = torch::empty({rows, kVocab});
  float* x = logits.data_ptr<float>();
  for (int64_t i = 0; i < rows * kVocab; ++i) {
    x[i] = static_cast<float>(12.0 * uniform({seed, 0, static_cast<uint32_t>(i), RngPurpose::kDraft, 0}) - 6.0);
  }
  for (int64_t r = 0; r < rows; ++r) x[r * kVocab + (r * 37) % kVocab] += 9.0f;
  x[17] = -std::numeric_limits<float>::infinity();  // a masked token
  return logits;
}

const std::vector<SamplingParams>& samplings() {
  static const std::vector<SamplingParams> all = {SamplingParams{0.0f}, SamplingParams{0.7f}, SamplingParams{1.3f},
                                                  SamplingParams{1.0f, 40}, SamplingParams{0.9f, 0, 0.8f}};
  return all;
}

TEST(LogitSummaryTest, VerdictsEqualTheHostRowsForEverySampling) {
  // One tensor holds every item's seven rows, as a batched forward does.
  const int64_t contexts = 7;
  const int64_t items = static_cast<int64_t>(samplings().size());
  const at::Tensor logits = peaked_logits(items * contexts, 3);
  // Drafted tokens: the peak of each node's context, or a random token.
  std::vector<DraftTree> drafts;
  for (int64_t i = 0; i < items; ++i) {
    std::vector<int32_t> tokens;
    const std::vector<int32_t> parents = tree_with({0, 0, 0, 0, 0, 0}).parents;
    for (size_t j = 0; j < parents.size(); ++j) {
      const int64_t row = i * contexts + parents[j] + 1;
      tokens.push_back(j == 3 ? 5 : static_cast<int32_t>((row * 37) % kVocab));
    }
    drafts.push_back(tree_with(tokens));
  }
  std::vector<SummaryItem> batch;
  for (int64_t i = 0; i < items; ++i) batch.push_back({i * contexts, &drafts[i], samplings()[i]});
  int accepted = 0, rejected = 0;
  for (uint64_t request = 0; request < 200; ++request) {
    std::vector<LogitSummary> summaries = summarize_logits(logits, batch);
    ASSERT_EQ(summaries.size(), batch.size());
    for (int64_t i = 0; i < items; ++i) {
      const SamplingParams& sampling = samplings()[i];
      TargetRows host(logits.data_ptr<float>() + i * contexts * kVocab, contexts, kVocab, sampling);
      TargetRows summarised(std::move(summaries[i]), kVocab, sampling);
      const Verdict a = verify({&drafts[i], &host, 11, request, 40});
      const Verdict b = verify({&drafts[i], &summarised, 11, request, 40});
      ASSERT_EQ(a.tokens, b.tokens) << "T " << sampling.temperature << " top-k " << sampling.top_k << " request "
                                    << request;
      ASSERT_EQ(a.accepted, b.accepted);
      accepted += static_cast<int>(a.accepted.size());
      rejected += static_cast<int>(a.accepted.size() < 3);
    }
  }
  EXPECT_GT(accepted, 0);
  EXPECT_GT(rejected, 0);
}

TEST(LogitSummaryTest, ProbabilitiesMatchTheHostRowsAndTheSummarisedRowsBitForBit) {
  const at::Tensor logits = peaked_logits(7, 4);
  const DraftTree draft = tree_with({0, 37, 74, 37, 0, 148});
  for (const SamplingParams& sampling : samplings()) {
    TargetRows host(logits.data_ptr<float>(), 7, kVocab, sampling);
    TargetRows summarised(std::move(summarize_logits(logits, {{0, &draft, sampling}}).front()), kVocab, sampling);
    for (size_t j = 0; j < draft.tokens.size(); ++j) {
      const int64_t context = draft.parents[j] + 1;
      const int32_t token = draft.tokens[j];
      const float p = summarised.prob(context, token);
      // The device sums the mass in its own order: equal to rounding.
      EXPECT_NEAR(p, host.prob(context, token), 1e-6f * host.prob(context, token) + 1e-12f)
          << "T " << sampling.temperature << " node " << j;
      // The row built later (for a residual) is the same p.
      EXPECT_EQ(summarised.row(context)[token], p);
      EXPECT_EQ(summarised.argmax(context), host.argmax(context));
    }
    const bool cut = sampling.greedy() || sampling.top_k > 0 || sampling.top_p < 1.0f;
    if (cut) {  // the same transformation of the same copied logits
      for (int64_t c = 0; c < 7; ++c) {
        for (int32_t v = 0; v < kVocab; ++v) ASSERT_EQ(summarised.row(c)[v], host.row(c)[v]) << c << " " << v;
      }
    }
  }
}

TEST(LogitSummaryTest, GreedyCopiesNoRowAndSamplingOnlyTheRowsItDrawsFrom) {
  // The chain of nodes 0, 1, 2 at its contexts' peaks, 60 above the rest:
  // p = 1 in float, so the chain is accepted whatever the uniforms.
  at::Tensor logits = torch::zeros({7, kVocab});
  const DraftTree draft = tree_with({3, 4, 5, 6, 7, 8});
  for (size_t j = 0; j < 3; ++j) logits[draft.parents[j] + 1][draft.tokens[j]] = 60.0f;
  logits[3][9] = 60.0f;  // node 2's context: the bonus
  const auto verify_counting = [&](const SamplingParams& sampling) {
    int copies = 0;
    LogitSummary summary = std::move(summarize_logits(logits, {{0, &draft, sampling}}).front());
    const auto copy = summary.copy_row;
    summary.copy_row = [&copies, copy](int64_t context, float* row) {
      ++copies;
      copy(context, row);
    };
    TargetRows rows(std::move(summary), kVocab, sampling);
    const Verdict v = verify({&draft, &rows, 1, 2, 3});
    EXPECT_EQ(v.tokens, (std::vector<int32_t>{3, 4, 5, 9})) << "T " << sampling.temperature;
    return copies;
  };
  EXPECT_EQ(verify_counting(SamplingParams{0.0f}), 0);
  EXPECT_EQ(verify_counting(SamplingParams{1.0f}), 1) << "the bonus context only";
  EXPECT_EQ(verify_counting(SamplingParams{1.0f, 50}), 4) << "every context reached, for its top-k threshold";
}

TEST(LogitSummaryTest, ARowNoDistributionComesFromIsAnErrorNamingItsContext) {
  at::Tensor logits = peaked_logits(7, 5);
  logits[2][9] = std::nanf("");
  logits[5].fill_(-std::numeric_limits<float>::infinity());
  const DraftTree draft = tree_with({0, 37, 74, 37, 0, 148});
  for (const SamplingParams& sampling : samplings()) {
    TargetRows rows(std::move(summarize_logits(logits, {{0, &draft, sampling}}).front()), kVocab, sampling);
    EXPECT_TRUE(throws_error([&] { rows.prob(2, 74); }, ErrorKind::kInvalidArgument, {"context 2", "non-finite"}))
        << sampling.temperature;
    EXPECT_TRUE(throws_error([&] { rows.row(5); }, ErrorKind::kInvalidArgument, {"context 5", "-inf"}));
    // Other contexts stay readable.
    TargetRows host(logits.data_ptr<float>(), 7, kVocab, sampling);
    const int32_t best = host.argmax(0);
    EXPECT_EQ(rows.argmax(0), best);
    EXPECT_NEAR(rows.prob(0, best), host.prob(0, best), 1e-6f);
  }
}

TEST(LogitSummaryTest, ADraftNodeOutsideTheRowsIsAnErrorNamingIt) {
  const at::Tensor logits = peaked_logits(7, 6);
  DraftTree late_parent = tree_with({0, 1, 2, 3, 4, 5});
  late_parent.parents[2] = 2;
  DraftTree big_token = tree_with({0, 1, 2, 3, 4, static_cast<int32_t>(kVocab)});
  EXPECT_TRUE(throws_error([&] { summarize_logits(logits, {{0, &late_parent, {}}}); }, ErrorKind::kInvalidArgument,
                           {"draft node 2", "parent 2"}));
  EXPECT_TRUE(throws_error([&] { summarize_logits(logits, {{0, &big_token, {}}}); }, ErrorKind::kInvalidArgument,
                           {"draft node 5", "token 1003"}));
}

}  // namespace
}  // namespace seed::spec
