// CausalLM: the cached, batched and tree forwards agree with the plain causal
// forward they optimise.
#include "models/causal_lm.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <map>
#include <string>
#include <tuple>

#include "models/base/counter_rng.h"
#include "models/base/error.h"
#include "models/base/sampling.h"
#include "tests/models/reference_logits.h"
#include "tests/models/tiny_models.h"

namespace seed::models {
namespace {

// A model family, and whether forward() runs the CPU layers (plain loops)
// or the ATen layers CUDA runs: every invariant holds on both.
using Variant = std::tuple<std::string, bool>;

class CausalLmTest : public ::testing::TestWithParam<Variant> {
 protected:
  void SetUp() override { model_ = random_model(std::get<0>(GetParam()), std::get<1>(GetParam())); }
  std::unique_ptr<CausalLM> model_;
};

TEST_P(CausalLmTest, IncrementalDecodingMatchesFullForward) {
  const auto tokens = random_tokens(24, model_->config().vocab_size, 1);
  const at::Tensor expected = reference_logits(*model_, tokens);
  KvCache cache = model_->make_cache({/*block_size=*/4});
  const SequenceId seq = cache.create();
  const std::vector<int32_t> prompt(tokens.begin(), tokens.begin() + 9);
  at::Tensor prefill = model_->forward({{seq, prompt, {}}}, cache, LogitsFor::kAll)[0];
  EXPECT_LT(max_diff(prefill, expected.narrow(0, 0, 9)), kTolerance);
  for (size_t t = 9; t < tokens.size(); ++t) {
    at::Tensor step = model_->forward({{seq, {tokens[t]}, {}}}, cache, LogitsFor::kLast)[0];
    EXPECT_LT(max_diff(step, expected[t]), kTolerance) << "position " << t;
  }
  EXPECT_EQ(cache.length(seq), 24);
}

TEST_P(CausalLmTest, TreeForwardMatchesEachRootToNodePath) {
  const int64_t V = model_->config().vocab_size;
  const auto prefix = random_tokens(6, V, 2);
  // A draft tree: 0 -> (1, 2), 1 -> (3, 4), 2 -> 5, 4 -> 6, and a second
  // root 7 (another candidate for the first token).
  const std::vector<int32_t> parents = {-1, 0, 0, 1, 1, 2, 4, -1};
  const auto nodes = random_tokens(parents.size(), V, 3);
  KvCache cache = model_->make_cache({/*block_size=*/4});
  const SequenceId seq = cache.create();
  model_->forward({{seq, prefix, {}}}, cache, LogitsFor::kLast);
  at::Tensor tree = model_->forward({{seq, nodes, parents}}, cache, LogitsFor::kAll)[0];
  for (size_t node = 0; node < nodes.size(); ++node) {
    std::vector<int32_t> path;
    for (int32_t j = node; j >= 0; j = parents[j]) path.insert(path.begin(), nodes[j]);
    std::vector<int32_t> sequence = prefix;
    sequence.insert(sequence.end(), path.begin(), path.end());
    const at::Tensor expected = reference_logits(*model_, sequence)[sequence.size() - 1];
    EXPECT_LT(max_diff(tree[node], expected), kTolerance) << "node " << node;
  }
}

TEST_P(CausalLmTest, CommitPathKeepsTheAcceptedBranch) {
  const int64_t V = model_->config().vocab_size;
  const auto prefix = random_tokens(5, V, 4);
  const std::vector<int32_t> parents = {-1, 0, 0, 2, 3, 2};
  const auto nodes = random_tokens(parents.size(), V, 5);
  const std::vector<int32_t> path = {0, 2, 3, 4};
  KvCache cache = model_->make_cache({/*block_size=*/4});
  const SequenceId seq = cache.create();
  model_->forward({{seq, prefix, {}}}, cache, LogitsFor::kLast);
  model_->forward({{seq, nodes, parents}}, cache, LogitsFor::kAll);
  cache.commit_path(seq, prefix.size(), path);
  ASSERT_EQ(cache.length(seq), static_cast<int64_t>(prefix.size() + path.size()));

  const int32_t next = 11;
  at::Tensor logits = model_->forward({{seq, {next}, {}}}, cache, LogitsFor::kLast)[0];
  std::vector<int32_t> sequence = prefix;
  for (int32_t node : path) sequence.push_back(nodes[node]);
  sequence.push_back(next);
  EXPECT_LT(max_diff(logits, reference_logits(*model_, sequence)[sequence.size() - 1]), kTolerance);
}

TEST_P(CausalLmTest, TruncateThenReappendEqualsNeverAppending) {
  const int64_t V = model_->config().vocab_size;
  const auto prefix = random_tokens(7, V, 6);
  const auto rejected = random_tokens(6, V, 7);
  const auto accepted = random_tokens(3, V, 8);
  KvCache cache = model_->make_cache({/*block_size=*/4});
  const SequenceId a = cache.create(), b = cache.create();
  model_->forward({{a, prefix, {}}}, cache, LogitsFor::kLast);
  model_->forward({{a, rejected, {}}}, cache, LogitsFor::kLast);
  cache.truncate(a, prefix.size());
  at::Tensor after_truncate = model_->forward({{a, accepted, {}}}, cache, LogitsFor::kAll)[0];
  model_->forward({{b, prefix, {}}}, cache, LogitsFor::kLast);
  at::Tensor never = model_->forward({{b, accepted, {}}}, cache, LogitsFor::kAll)[0];
  EXPECT_LT(max_diff(after_truncate, never), kTolerance);
}

TEST_P(CausalLmTest, ForkSharesThePrefixAndDiverges) {
  const int64_t V = model_->config().vocab_size;
  const auto prefix = random_tokens(50, V, 9);
  const auto left = random_tokens(4, V, 10), right = random_tokens(4, V, 11);
  constexpr int64_t kBlock = 8;
  KvCache cache = model_->make_cache({kBlock});
  const SequenceId parent = cache.create();
  model_->forward({{parent, prefix, {}}}, cache, LogitsFor::kLast);
  const int64_t before = cache.bytes_in_use();
  EXPECT_EQ(before, 7 * kBlock * cache.bytes_per_token());  // ceil(50 / 8) blocks

  const SequenceId child = cache.fork(parent);
  EXPECT_EQ(cache.bytes_in_use(), before) << "fork must not copy the prefix";
  at::Tensor child_logits = model_->forward({{child, right, {}}}, cache, LogitsFor::kAll)[0];
  // The child copied only the shared, partly filled tail block.
  EXPECT_EQ(cache.bytes_in_use(), before + kBlock * cache.bytes_per_token());
  at::Tensor parent_logits = model_->forward({{parent, left, {}}}, cache, LogitsFor::kAll)[0];

  auto expected = [&](const std::vector<int32_t>& suffix) {
    std::vector<int32_t> sequence = prefix;
    sequence.insert(sequence.end(), suffix.begin(), suffix.end());
    return reference_logits(*model_, sequence).narrow(0, prefix.size(), suffix.size());
  };
  EXPECT_LT(max_diff(parent_logits, expected(left)), kTolerance);
  EXPECT_LT(max_diff(child_logits, expected(right)), kTolerance);
  cache.release(child);
  cache.release(parent);
  EXPECT_EQ(cache.bytes_in_use(), 0);
}

TEST_P(CausalLmTest, BatchedForwardMatchesSeparateForwards) {
  const int64_t V = model_->config().vocab_size;
  // Three sequences of different cached lengths and new-token counts; the
  // last one's new tokens are a tree whose branch {0, 2} is then committed.
  const std::vector<std::vector<int32_t>> prefixes = {random_tokens(3, V, 12), random_tokens(17, V, 13),
                                                      random_tokens(9, V, 14)};
  const std::vector<std::vector<int32_t>> news = {random_tokens(5, V, 15), random_tokens(1, V, 16),
                                                  random_tokens(3, V, 17)};
  const std::vector<std::vector<int32_t>> parents = {{}, {}, {-1, 0, 0}};
  const std::vector<int32_t> committed = {0, 2};

  // Runs the scenario one sequence at a time (batched = false) or all
  // sequences in each forward; returns the new tokens' and next step's logits.
  auto run = [&](bool batched) {
    KvCache cache = model_->make_cache({/*block_size=*/4});
    std::vector<SequenceId> ids;
    for (const auto& prefix : prefixes) {
      ids.push_back(cache.create());
      model_->forward({{ids.back(), prefix, {}}}, cache, LogitsFor::kLast);
    }
    auto step = [&](std::vector<SequenceInput> inputs, LogitsFor which) {
      if (batched) return model_->forward(inputs, cache, which);
      std::vector<at::Tensor> rows;
      for (const auto& input : inputs) rows.push_back(model_->forward({input}, cache, which)[0]);
      return which == LogitsFor::kLast ? torch::stack(rows) : at::Tensor();
    };
    std::vector<at::Tensor> news_logits;
    if (batched) {
      at::Tensor all = step({{ids[0], news[0], parents[0]}, {ids[1], news[1], parents[1]}, {ids[2], news[2], parents[2]}},
                            LogitsFor::kAll);
      for (size_t b = 0; b < ids.size(); ++b) news_logits.push_back(all[b].narrow(0, 0, news[b].size()));
    } else {
      for (size_t b = 0; b < ids.size(); ++b) {
        news_logits.push_back(model_->forward({{ids[b], news[b], parents[b]}}, cache, LogitsFor::kAll)[0]);
      }
    }
    cache.commit_path(ids[2], prefixes[2].size(), committed);
    at::Tensor next = step({{ids[0], {1}, {}}, {ids[1], {2}, {}}, {ids[2], {3}, {}}}, LogitsFor::kLast);
    return std::make_pair(news_logits, next);
  };
  const auto [separate_news, separate_next] = run(false);
  const auto [batched_news, batched_next] = run(true);
  for (size_t b = 0; b < prefixes.size(); ++b) {
    EXPECT_LT(max_diff(batched_news[b], separate_news[b]), kTolerance) << "sequence " << b;
  }
  EXPECT_LT(max_diff(batched_next, separate_next), kTolerance);
}

// kTail runs the LM head only on the rows asked for; they equal kAll's.
TEST_P(CausalLmTest, TailLogitsAreThoseRowsOfAllLogits) {
  const int64_t V = model_->config().vocab_size;
  const std::vector<std::vector<int32_t>> prompts = {random_tokens(7, V, 40), random_tokens(3, V, 41)};
  const std::vector<int32_t> from = {4, 0};
  auto run = [&](LogitsFor which) {
    KvCache cache = model_->make_cache({/*block_size=*/4});
    std::vector<SequenceInput> batch;
    for (size_t b = 0; b < prompts.size(); ++b) batch.push_back({cache.create(), prompts[b], {}, from[b]});
    return model_->forward(batch, cache, which);
  };
  const at::Tensor all = run(LogitsFor::kAll), tail = run(LogitsFor::kTail);
  ASSERT_EQ(tail.size(0), 3 + 3);
  EXPECT_LT(max_diff(tail.narrow(0, 0, 3), all[0].narrow(0, 4, 3)), kTolerance);
  EXPECT_LT(max_diff(tail.narrow(0, 3, 3), all[1].narrow(0, 0, 3)), kTolerance);
  KvCache cache = model_->make_cache();
  SequenceInput out_of_range{cache.create(), prompts[1], {}, 3};
  EXPECT_THROW(model_->forward({out_of_range}, cache, LogitsFor::kTail), Error);
}

// A sequence started from a cached prefix computes only the rest, and its
// logits are those of prefilling the whole prompt.
TEST_P(CausalLmTest, APrefixFromTheCacheGivesTheLogitsOfAFullPrefill) {
  const int64_t V = model_->config().vocab_size;
  const std::vector<int32_t> prompt = random_tokens(11, V, 50);
  KvCache cache = model_->make_cache({/*block_size=*/4});
  const at::Tensor full = model_->forward({{cache.create(), prompt, {}}}, cache, LogitsFor::kLast);
  const CachedStart start = cache.create_with_prefix(prompt);
  ASSERT_EQ(start.cached, 8);
  const std::vector<int32_t> rest(prompt.begin() + start.cached, prompt.end());
  const at::Tensor reused = model_->forward({{start.sequence, rest, {}}}, cache, LogitsFor::kLast);
  EXPECT_LT(max_diff(reused, full), kTolerance);
}

// forward_full attends one sequence at a time (causal_attention): each row
// of a batch must see only itself, whatever the others hold.
TEST_P(CausalLmTest, FullForwardOfABatchMatchesEachSequenceAlone) {
  const int64_t V = model_->config().vocab_size;
  const std::vector<std::vector<int32_t>> rows = {random_tokens(20, V, 30), random_tokens(20, V, 31),
                                                  random_tokens(20, V, 32)};
  std::vector<int64_t> ids;
  for (const auto& row : rows) ids.insert(ids.end(), row.begin(), row.end());
  torch::NoGradGuard no_grad;
  const at::Tensor batched = model_->forward_full(torch::tensor(ids).view({3, 20}));
  for (size_t b = 0; b < rows.size(); ++b) {
    EXPECT_LT(max_diff(batched[b], reference_logits(*model_, rows[b])), kTolerance) << "row " << b;
  }
}

// Mixed precision: bfloat16 matrix products on float32 weights give logits
// within bfloat16's rounding of float32's, and gradients in the weights'
// dtype.
TEST_P(CausalLmTest, BfloatMatmulsStayCloseToFloat32AndTrainFloat32Weights) {
  LoadOptions options;
  options.fused_cpu_layers = std::get<1>(GetParam());
  options.keep_parameters = true;  // it trains them
  model_ = CausalLM::random(testing::tiny_config(std::get<0>(GetParam())), 7, options);
  for (const at::Tensor& p : model_->weights().parameters()) p.requires_grad_(true);
  const at::Tensor tokens = torch::tensor(std::vector<int64_t>{3, 14, 15, 9, 26, 5, 35, 8, 9, 7, 9, 3}).view({2, 6});
  const at::Tensor exact = model_->forward_full(tokens).detach();
  const at::Tensor mixed = model_->forward_full(tokens, torch::kBFloat16);
  EXPECT_EQ(mixed.scalar_type(), torch::kFloat);
  EXPECT_LT(max_diff(mixed.detach(), exact), 0.05 * exact.abs().max().item<double>());
  mixed.sum().backward();
  for (const at::Tensor& p : model_->weights().parameters()) {
    ASSERT_TRUE(p.grad().defined());
    EXPECT_EQ(p.grad().scalar_type(), torch::kFloat);
    EXPECT_TRUE(torch::isfinite(p.grad()).all().item<bool>());
  }
}

// Samples `steps` tokens for each prompt, decoding the requests listed in
// `order` together in one batched forward per step. Each draw is keyed by
// (seed, request, position), so tokens must not depend on the batch.
std::map<int, std::vector<int32_t>> sample_batch(CausalLM& model, const std::vector<std::vector<int32_t>>& prompts,
                                                 const std::vector<int>& order, int steps) {
  const SamplingParams sampling{/*temperature=*/1.0f, /*top_k=*/0, /*top_p=*/0.95f};
  const int64_t V = model.config().vocab_size;
  KvCache cache = model.make_cache({/*block_size=*/4});
  std::map<int, SequenceId> ids;
  std::map<int, std::vector<int32_t>> out;
  std::vector<SequenceInput> batch;
  for (int r : order) {
    ids[r] = cache.create();
    batch.push_back({ids[r], prompts[r], {}});
  }
  std::vector<float> probs(V);
  for (int step = 0; step < steps; ++step) {
    at::Tensor logits = model.forward(batch, cache, LogitsFor::kLast).contiguous();
    for (size_t b = 0; b < order.size(); ++b) {
      const int r = order[b];
      sampling_distribution(logits[b].data_ptr<float>(), V, sampling, probs.data());
      const RngKey key{/*seed=*/42, static_cast<uint64_t>(r), static_cast<uint32_t>(cache.length(ids[r])),
                       RngPurpose::kSample};
      out[r].push_back(sample_from(probs.data(), V, uniform(key)));
      batch[b] = {ids[r], {out[r].back()}, {}};
    }
  }
  return out;
}

TEST_P(CausalLmTest, SampledTokensDoNotDependOnBatchComposition) {
  const int64_t V = model_->config().vocab_size;
  const std::vector<std::vector<int32_t>> prompts = {random_tokens(4, V, 20), random_tokens(11, V, 21),
                                                     random_tokens(7, V, 22)};
  constexpr int kSteps = 12;
  const auto together = sample_batch(*model_, prompts, {0, 1, 2}, kSteps);
  const auto reordered = sample_batch(*model_, prompts, {2, 0, 1}, kSteps);
  for (int r = 0; r < 3; ++r) {
    const auto alone = sample_batch(*model_, prompts, {r}, kSteps);
    EXPECT_EQ(alone.at(r), together.at(r)) << "request " << r;
    EXPECT_EQ(alone.at(r), reordered.at(r)) << "request " << r;
  }
}

INSTANTIATE_TEST_SUITE_P(Families, CausalLmTest,
                         ::testing::Combine(::testing::ValuesIn(testing::all_variants()), ::testing::Bool()),
                         [](const auto& info) {
                           return std::get<0>(info.param) + (std::get<1>(info.param) ? "_cpu_layers" : "_aten_layers");
                         });

}  // namespace
}  // namespace seed::models
