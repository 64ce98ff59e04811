// Logits summarised where they are (as on a GPU; here on the CPU): the
// verifier reaches the verdicts it reaches from the host rows, reads p from
// the summary (top-k/top-p cuts and rejections included), copies no row,
// draws each verdict's last token where the logits are, as the host would
// and from the residual's distribution, gives STAND the host's top entries,
// and names a row no distribution can come from and a draft node outside
// the rows.
#include "spec/engine/logit_summary.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <limits>
#include <memory>
#include <set>
#include <utility>
#include <vector>

#include "models/base/counter_rng.h"
#include "models/base/error.h"
#include "models/base/sampling.h"
#include "tests/spec/chi_square.h"
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

// LogitRows that count what crosses to the host.
class CountingRows : public LogitRows {
 public:
  explicit CountingRows(std::shared_ptr<const LogitRows> rows) : rows_(std::move(rows)) {}
  void copy_row(int64_t row, float* out) const override {
    ++copies;
    rows_->copy_row(row, out);
  }
  std::vector<int32_t> draw(const std::vector<RowDraw>& draws) const override {
    ++batches;
    return rows_->draw(draws);
  }
  mutable int copies = 0;
  mutable int batches = 0;

 private:
  std::shared_ptr<const LogitRows> rows_;
};

// The summary's rows, counted.
std::shared_ptr<CountingRows> count_rows(LogitSummary& summary) {
  auto counting = std::make_shared<CountingRows>(summary.rows);
  summary.rows = counting;
  return counting;
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

TEST(LogitSummaryTest, ProbabilitiesMatchTheHostRowsAndTheSummarisedRows) {
  const at::Tensor logits = peaked_logits(7, 4);
  const DraftTree draft = tree_with({0, 37, 74, 37, 0, 148});
  for (const SamplingParams& sampling : samplings()) {
    TargetRows host(logits.data_ptr<float>(), 7, kVocab, sampling);
    LogitSummary summary = std::move(summarize_logits(logits, {{0, &draft, sampling}}).front());
    const auto counting = count_rows(summary);
    TargetRows summarised(std::move(summary), kVocab, sampling);
    for (size_t j = 0; j < draft.tokens.size(); ++j) {
      const int64_t context = draft.parents[j] + 1;
      const int32_t token = draft.tokens[j];
      const int copies = counting->copies;
      const float p = summarised.prob(context, token);
      EXPECT_EQ(counting->copies, copies) << "p at a drafted token reads no row";
      // The device sums the mass in its own order: equal to rounding.
      EXPECT_NEAR(p, host.prob(context, token), 2e-6f * host.prob(context, token) + 1e-12f)
          << "T " << sampling.temperature << " node " << j;
      // A row built later is the same p.
      EXPECT_EQ(summarised.row(context)[token], p);
      EXPECT_EQ(summarised.argmax(context), host.argmax(context));
    }
    // Top-k and top-p keep the host's tokens, and p there is the host's to
    // rounding (the kept mass summed in the device's order).
    for (int64_t c = 0; c < 7; ++c) {
      for (int32_t v = 0; v < kVocab; ++v) {
        const float want = host.row(c)[v];
        ASSERT_EQ(summarised.row(c)[v] > 0.0f, want > 0.0f) << "context " << c << " token " << v;
        ASSERT_NEAR(summarised.row(c)[v], want, 2e-6f * want) << "context " << c << " token " << v;
      }
    }
  }
}

// Ties keep the lower ids: on rows of equal logits top-k keeps the first
// k tokens and top-p the first that reach its mass, as on the host.
TEST(LogitSummaryTest, TopKAndTopPBreakTiesAsTheHostDoes) {
  at::Tensor logits = torch::zeros({2, kVocab});
  logits[1].narrow(0, 500, 10).fill_(2.0f);  // ten tokens above the rest, tied
  const DraftTree empty;
  for (const SamplingParams& sampling : {SamplingParams{1.0f, 40}, SamplingParams{1.0f, 0, 0.5f},
                                         SamplingParams{0.5f, 5}, SamplingParams{0.5f, 0, 0.3f}}) {
    const at::Tensor both = logits.clone();
    TargetRows host(both.data_ptr<float>(), 2, kVocab, sampling);
    for (int64_t r = 0; r < 2; ++r) {
      TargetRows summarised(std::move(summarize_logits(logits.narrow(0, r, 1), {{0, &empty, sampling}}).front()),
                            kVocab, sampling);
      int kept = 0;
      for (int32_t v = 0; v < kVocab; ++v) {
        const float want = host.row(r)[v];
        ASSERT_EQ(summarised.prob(0, v) > 0.0f, want > 0.0f) << "row " << r << " token " << v;
        ASSERT_NEAR(summarised.prob(0, v), want, 2e-6f * want);
        kept += want > 0.0f;
      }
      EXPECT_GT(kept, 1);
      EXPECT_LT(kept, kVocab);
    }
  }
}

// STAND's top entries of p come from the summary, as the host ranks them:
// by probability, ties (negative zeros among them) to the lower id, the
// tokens top-k and top-p cut left out.
TEST(LogitSummaryTest, TopEntriesComeFromTheSummaryWithoutARow) {
  at::Tensor logits = peaked_logits(3, 10);
  logits[1].fill_(0.0f);                  // ties everywhere,
  logits[1][3] = -0.0f;                   // a negative zero among them,
  logits[1].narrow(0, 600, 4).fill_(1.0f);  // and four tied above them
  const DraftTree chain{{5, 6}, {-1, 0}, {}, true};
  for (const SamplingParams& sampling : samplings()) {
    for (const int k : {1, 10}) {
      LogitSummary summary = std::move(summarize_logits(logits, {{0, &chain, sampling, 10}}).front());
      const auto counting = count_rows(summary);
      TargetRows summarised(std::move(summary), kVocab, sampling);
      TargetRows host(logits.data_ptr<float>(), 3, kVocab, sampling);
      for (int64_t c = 0; c < 3; ++c) {
        const TopTokens got = summarised.top(c, k);
        const TopTokens want = top_entries(host.row(c), kVocab, k);
        ASSERT_EQ(got.ids, want.ids) << "T " << sampling.temperature << " top-k " << sampling.top_k << " context " << c;
        for (size_t j = 0; j < want.probs.size(); ++j) EXPECT_NEAR(got.probs[j], want.probs[j], 2e-6f * want.probs[j]);
      }
      EXPECT_EQ(counting->copies, 0) << "T " << sampling.temperature;
    }
  }
}

TEST(LogitSummaryTest, VerifyingCopiesNoRowAndSampledRequestsDrawOnce) {
  // The chain of nodes 0, 1, 2 at its contexts' peaks, 60 above the rest:
  // p = 1 in float, so the chain is accepted whatever the uniforms.
  at::Tensor logits = torch::zeros({7, kVocab});
  const DraftTree draft = tree_with({3, 4, 5, 6, 7, 8});
  for (size_t j = 0; j < 3; ++j) logits[draft.parents[j] + 1][draft.tokens[j]] = 60.0f;
  logits[3][9] = 60.0f;  // node 2's context: the bonus
  const auto verify_counting = [&](const SamplingParams& sampling) {
    LogitSummary summary = std::move(summarize_logits(logits, {{0, &draft, sampling}}).front());
    const auto counting = count_rows(summary);
    TargetRows rows(std::move(summary), kVocab, sampling);
    const VerifyRequest request{&draft, &rows, 1, 2, 3};
    draw_target_tokens({request});
    const Verdict v = verify(request);
    EXPECT_EQ(v.tokens, (std::vector<int32_t>{3, 4, 5, 9})) << "T " << sampling.temperature;
    return std::pair{counting->copies, counting->batches};
  };
  EXPECT_EQ(verify_counting(SamplingParams{0.0f}), std::pair(0, 0));
  EXPECT_EQ(verify_counting(SamplingParams{1.0f}), std::pair(0, 1))
      << "every context's token, drawn where the logits are in one batch";
  EXPECT_EQ(verify_counting(SamplingParams{1.0f, 50}), std::pair(0, 1)) << "top-k's threshold from the summary";
  EXPECT_EQ(verify_counting(SamplingParams{0.9f, 0, 0.7f}), std::pair(0, 1)) << "top-p's too";
}

// A sampled tree whose q spreads over 24 tokens (the context's peak among
// them), drawn with the request's own uniforms.
DraftTree sampled_tree(uint64_t request, int64_t contexts) {
  DraftTree draft = tree_with({0, 0, 0, 0, 0, 0});
  draft.deterministic = false;
  for (int64_t c = 0; c < contexts; ++c) {
    DraftRow q;
    double mass = 0.0;
    for (uint32_t j = 0; j < 24; ++j) {
      q.ids.push_back(static_cast<int32_t>((c * 37 + j * 41) % kVocab));
      const double weight = 0.05 + uniform({request, 1, static_cast<uint32_t>(c), RngPurpose::kDraft, j});
      q.probs.push_back(static_cast<float>(weight));
      mass += q.probs.back();
    }
    for (float& x : q.probs) x = static_cast<float>(x / mass);
    draft.q.push_back(std::move(q));
  }
  for (size_t j = 0; j < draft.tokens.size(); ++j) {
    const DraftRow& q = draft.q[static_cast<size_t>(draft.parents[j] + 1)];
    const double u = uniform({request, 2, static_cast<uint32_t>(j), RngPurpose::kDraft, 0});
    draft.tokens[j] = q.ids[static_cast<size_t>(sample_from(q.probs.data(), 24, u))];
  }
  return draft;
}

// Rejections at most contexts: acceptance reads p at q's support from the
// summary, the last token is drawn on the logits' side, and the verdicts
// are the host rows'.
TEST(LogitSummaryTest, RejectionsOfSampledTreesCopyNoRowAndGiveTheHostVerdicts) {
  const int64_t contexts = 7;
  const at::Tensor logits = peaked_logits(contexts, 8);
  for (const SamplingParams& sampling :
       {SamplingParams{0.8f}, SamplingParams{1.0f, 40}, SamplingParams{0.9f, 0, 0.8f}}) {
    int rejected = 0;
    for (uint64_t request = 0; request < 300; ++request) {
      const DraftTree draft = sampled_tree(request, contexts);
      LogitSummary summary = std::move(summarize_logits(logits, {{0, &draft, sampling}}).front());
      const auto counting = count_rows(summary);
      TargetRows summarised(std::move(summary), kVocab, sampling);
      TargetRows host(logits.data_ptr<float>(), contexts, kVocab, sampling);
      const Verdict a = verify({&draft, &host, 5, request, 9});
      const Verdict b = verify({&draft, &summarised, 5, request, 9});
      ASSERT_EQ(a.tokens, b.tokens) << "request " << request;
      EXPECT_EQ(counting->copies, 0) << "request " << request;
      EXPECT_EQ(counting->batches, 1) << "request " << request;
      rejected += a.accepted.size() < 3;
    }
    EXPECT_GT(rejected, 100) << "T " << sampling.temperature << " top-k " << sampling.top_k;
  }
}

// A residual as rejections leave it: p scaled, two tokens zeroed, one set.
Residual rejected_residual() { return Residual{1.25, {37, 5, 40}, {0.0, 0.0, 0.01}}; }

// Draws where the logits are give the host's token (the two compute p with
// different exps, which moves a draw only for a u within a rounding of a
// boundary: none of these), and a batch gives what each draw gives alone:
// inverse-CDF draws from p and from a residual, and races over p, mixed in
// one batch and races alone (as the matching rule batches them).
TEST(LogitSummaryTest, DeviceDrawsAreTheHostDraws) {
  const at::Tensor logits = peaked_logits(1, 9);
  const SamplingParams sampling{1.3f};
  const DraftTree empty;
  TargetRows summarised(std::move(summarize_logits(logits, {{0, &empty, sampling}}).front()), kVocab, sampling);
  TargetRows host(logits.data_ptr<float>(), 1, kVocab, sampling);
  std::vector<FinalDraw> draws, races;
  for (uint32_t i = 0; i < 3000; ++i) {
    const RngKey key{7, 0, i, RngPurpose::kResample, 0};
    if (i % 3 == 0) {
      draws.push_back(FinalDraw{0, Residual{}, 0.0, stream_bits(key)});
      races.push_back(draws.back());
    } else {
      draws.push_back(FinalDraw{0, i % 3 == 1 ? Residual{} : rejected_residual(), uniform(key), std::nullopt});
    }
  }
  std::vector<const FinalDraw*> race_pointers;
  for (const FinalDraw& d : races) race_pointers.push_back(&d);
  const std::vector<int32_t> raced =
      draw_final_tokens(std::vector<TargetRows*>(races.size(), &summarised), race_pointers);
  std::set<int32_t> winners;
  for (size_t i = 0; i < races.size(); ++i) {
    ASSERT_EQ(raced[i], host.draw(races[i])) << "race " << i;
    winners.insert(raced[i]);
  }
  EXPECT_GT(winners.size(), 3u);  // the races are not all won by p's top token
  for (const SamplingParams& cut : samplings()) {
    if (cut.greedy()) continue;
    TargetRows cut_summarised(std::move(summarize_logits(logits, {{0, &empty, cut}}).front()), kVocab, cut);
    TargetRows cut_host(logits.data_ptr<float>(), 1, kVocab, cut);
    for (uint32_t i = 0; i < 200; ++i) {
      const FinalDraw race{0, Residual{}, 0.0, stream_bits({5, 1, i, RngPurpose::kResample, 0})};
      ASSERT_EQ(cut_summarised.draw(race), cut_host.draw(race))
          << "T " << cut.temperature << " top-k " << cut.top_k << " top-p " << cut.top_p << " race " << i;
    }
  }
  const std::vector<TargetRows*> targets(draws.size(), &summarised);
  std::vector<const FinalDraw*> pointers;
  for (const FinalDraw& d : draws) pointers.push_back(&d);
  const std::vector<int32_t> batched = draw_final_tokens(targets, pointers);
  ASSERT_EQ(batched.size(), draws.size());
  for (size_t i = 0; i < draws.size(); ++i) {
    ASSERT_EQ(batched[i], host.draw(draws[i])) << "draw " << i;
    if (i < 50) {
      ASSERT_EQ(batched[i], summarised.draw(draws[i])) << "draw " << i;
    }
    if (i % 3 == 2) {
      ASSERT_NE(batched[i], 37);
      ASSERT_NE(batched[i], 5);
    }
  }
}

TEST(LogitSummaryTest, DeviceDrawsFollowTheResidual) {
  // Six tokens: p = softmax(log w) = w / sum(w).
  const std::vector<float> w = {0.05f, 0.30f, 0.10f, 0.25f, 0.15f, 0.15f};
  at::Tensor logits = torch::empty({1, 6});
  for (int64_t v = 0; v < 6; ++v) logits[0][v] = std::log(w[static_cast<size_t>(v)]);
  const SamplingParams sampling{1.0f};
  const DraftTree empty;
  LogitSummary summary = std::move(summarize_logits(logits, {{0, &empty, sampling}}).front());
  const Residual residual{2.0, {1, 3}, {0.1, 0.0}};  // r = (0.1, 0.1, 0.2, 0, 0.3, 0.3)
  const std::vector<double> expected = {0.1, 0.1, 0.2, 0.0, 0.3, 0.3};
  constexpr int64_t kDraws = 100000;
  std::vector<RowDraw> draws;
  for (uint32_t i = 0; i < kDraws; ++i) {
    draws.push_back(
        {0, 1.0f, summary.contexts[0], &residual, uniform({3, 0, i, RngPurpose::kResample, 0}), std::nullopt});
  }
  std::vector<int64_t> counts(6, 0);
  for (const int32_t token : summary.rows->draw(draws)) ++counts[static_cast<size_t>(token)];
  const ::seed::testing::ChiSquare fit = ::seed::testing::chi_square(counts, expected, kDraws);
  EXPECT_GT(fit.p_value, 1e-3) << "chi-square " << fit.statistic;
  // A draw from p instead (the residual ignored) fails the same test.
  const Residual p;
  for (RowDraw& d : draws) d.residual = &p;
  std::fill(counts.begin(), counts.end(), 0);
  for (const int32_t token : summary.rows->draw(draws)) ++counts[static_cast<size_t>(token)];
  EXPECT_LT(::seed::testing::chi_square(counts, expected, kDraws).p_value, 1e-3);
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
