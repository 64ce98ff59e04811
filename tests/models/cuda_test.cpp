// CausalLM on a CUDA device computes what it computes on the CPU: cached
// decoding, token trees and packed batches, for every family variant.
// Skipped where libtorch sees no GPU.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "models/causal_lm.h"
#include "tests/models/tiny_models.h"

namespace seed::models {
namespace {

constexpr double kTolerance = 1e-3;  // fp32 on both; kernels sum in other orders

std::vector<int32_t> tokens_of(int64_t n, int64_t vocab, uint64_t seed) {
  at::Generator gen = at::detail::createCPUGenerator(seed);
  at::Tensor t = torch::randint(vocab, {n}, gen, torch::kLong);
  return std::vector<int32_t>(t.data_ptr<int64_t>(), t.data_ptr<int64_t>() + n);
}

double max_diff(const at::Tensor& a, const at::Tensor& b) {
  return (a.cpu() - b.cpu()).abs().max().item<double>();
}

class CudaTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
    cpu_ = CausalLM::random(testing::tiny_config(GetParam()), /*seed=*/11);
    LoadOptions on_gpu;
    on_gpu.device = "cuda:0";
    gpu_ = CausalLM::random(testing::tiny_config(GetParam()), /*seed=*/11, on_gpu);
  }
  std::unique_ptr<CausalLM> cpu_, gpu_;
};

TEST_P(CudaTest, CachedDecodingEqualsTheCpu) {
  const auto tokens = tokens_of(20, cpu_->config().vocab_size, 1);
  KvCache cpu_cache = cpu_->make_cache({/*block_size=*/4}), gpu_cache = gpu_->make_cache({/*block_size=*/4});
  const SequenceId a = cpu_cache.create(), b = gpu_cache.create();
  const std::vector<int32_t> prompt(tokens.begin(), tokens.begin() + 7);
  EXPECT_LT(max_diff(cpu_->forward({{a, prompt, {}}}, cpu_cache, LogitsFor::kAll),
                     gpu_->forward({{b, prompt, {}}}, gpu_cache, LogitsFor::kAll)),
            kTolerance);
  for (size_t t = 7; t < tokens.size(); ++t) {
    EXPECT_LT(max_diff(cpu_->forward({{a, {tokens[t]}, {}}}, cpu_cache, LogitsFor::kLast),
                       gpu_->forward({{b, {tokens[t]}, {}}}, gpu_cache, LogitsFor::kLast)),
              kTolerance)
        << "position " << t;
  }
}

TEST_P(CudaTest, TreesAndPackedBatchesEqualTheCpu) {
  const int64_t V = cpu_->config().vocab_size;
  const auto prefix = tokens_of(6, V, 2), other = tokens_of(9, V, 3);
  const std::vector<int32_t> parents = {-1, 0, 0, 1, 1, 2, 4, -1};
  const auto nodes = tokens_of(parents.size(), V, 4);
  KvCache cpu_cache = cpu_->make_cache({/*block_size=*/4}), gpu_cache = gpu_->make_cache({/*block_size=*/4});
  const SequenceId a = cpu_cache.create(), b = cpu_cache.create();
  const SequenceId c = gpu_cache.create(), d = gpu_cache.create();
  EXPECT_LT(max_diff(cpu_->forward({{a, prefix, {}}, {b, other, {}}}, cpu_cache, LogitsFor::kAll),
                     gpu_->forward({{c, prefix, {}}, {d, other, {}}}, gpu_cache, LogitsFor::kAll)),
            kTolerance);
  EXPECT_LT(max_diff(cpu_->forward({{a, nodes, parents}, {b, {5}, {}}}, cpu_cache, LogitsFor::kAll),
                     gpu_->forward({{c, nodes, parents}, {d, {5}, {}}}, gpu_cache, LogitsFor::kAll)),
            kTolerance);
}

// Replayed CUDA graphs compute what eager forwards compute, in bfloat16: a
// batch decoding (one shape again and again: run, captured, replayed) and
// token trees verified on it three times (run, captured, replayed).
TEST_P(CudaTest, GraphsReplayWhatEagerForwardsCompute) {
  constexpr double kBfloat16Tolerance = 5e-2;  // key positions padded to the graph's bucket: other sum orders
  LoadOptions graphed, eager;
  graphed.device = eager.device = "cuda:0";
  graphed.weights_dtype = eager.weights_dtype = WeightDtype::kBFloat16;
  eager.cuda_graphs = false;
  const ModelConfig config = testing::tiny_config(GetParam());
  auto with_graphs = CausalLM::random(config, /*seed=*/11, graphed);
  auto without = CausalLM::random(config, /*seed=*/11, eager);
  ASSERT_EQ(with_graphs->tensor_options().dtype(), torch::kBFloat16);
  const int64_t V = config.vocab_size;
  KvCache gc = with_graphs->make_cache({/*block_size=*/4}), ec = without->make_cache({/*block_size=*/4});
  const SequenceId g0 = gc.create(), g1 = gc.create(), e0 = ec.create(), e1 = ec.create();
  const auto short_prompt = tokens_of(5, V, 5), long_prompt = tokens_of(9, V, 6);
  with_graphs->forward({{g0, short_prompt, {}}, {g1, long_prompt, {}}}, gc, LogitsFor::kLast);
  without->forward({{e0, short_prompt, {}}, {e1, long_prompt, {}}}, ec, LogitsFor::kLast);
  const auto steps = tokens_of(24, V, 7);
  for (size_t t = 0; t + 1 < steps.size(); t += 2) {
    const at::Tensor g = with_graphs->forward({{g0, {steps[t]}, {}}, {g1, {steps[t + 1]}, {}}}, gc, LogitsFor::kLast);
    const at::Tensor e = without->forward({{e0, {steps[t]}, {}}, {e1, {steps[t + 1]}, {}}}, ec, LogitsFor::kLast);
    EXPECT_LT(max_diff(g, e), kBfloat16Tolerance) << "step " << t / 2;
  }
  const std::vector<int32_t> parents = {-1, 0, 0, 1};
  const auto nodes = tokens_of(parents.size(), V, 8);
  int64_t warm_ups_before_replay = 0;
  for (int round = 0; round < 3; ++round) {
    if (round == 2) warm_ups_before_replay = with_graphs->graph_warm_ups();
    const int64_t g_length = gc.length(g0), e_length = ec.length(e0);
    const at::Tensor g = with_graphs->forward({{g0, nodes, parents}, {g1, {nodes[0]}, {}}}, gc, LogitsFor::kAll);
    const at::Tensor e = without->forward({{e0, nodes, parents}, {e1, {nodes[0]}, {}}}, ec, LogitsFor::kAll);
    EXPECT_LT(max_diff(g, e), kBfloat16Tolerance) << "tree round " << round;
    gc.truncate(g0, g_length);
    ec.truncate(e0, e_length);
    gc.truncate(g1, gc.length(g1) - 1);
    ec.truncate(e1, ec.length(e1) - 1);
  }
  EXPECT_GE(with_graphs->captured_graphs(), 2);  // the decode shape and the tree's
  EXPECT_EQ(without->captured_graphs(), 0);
  // Each graph's shape ran eagerly and was captured; the tree's third
  // forward replayed.
  EXPECT_GE(with_graphs->graph_warm_ups(), 2 * with_graphs->captured_graphs());
  EXPECT_EQ(with_graphs->graph_warm_ups(), warm_ups_before_replay);
  EXPECT_EQ(without->graph_warm_ups(), 0);
}

// Decode steps and trees read the paged cache in place (paged_attention.h)
// and compute what attention over gathered keys computes: after prompts
// long enough for several splits of the key positions, a batch of
// sequences of other lengths, chains and trees, through CUDA graphs.
TEST_P(CudaTest, PagedAttentionEqualsAttentionOverGatheredKeys) {
  ModelConfig config = testing::tiny_config(GetParam());
  config.max_position_embeddings = 640;
  LoadOptions paged, gathered;
  paged.device = gathered.device = "cuda:0";
  gathered.paged_attention = false;
  auto in_place = CausalLM::random(config, /*seed=*/11, paged);
  auto gathering = CausalLM::random(config, /*seed=*/11, gathered);
  const int64_t V = config.vocab_size;
  KvCache pc = in_place->make_cache({/*block_size=*/4}), gc = gathering->make_cache({/*block_size=*/4});
  const SequenceId p0 = pc.create(), p1 = pc.create(), g0 = gc.create(), g1 = gc.create();
  const auto long_prompt = tokens_of(530, V, 9), short_prompt = tokens_of(21, V, 10);
  EXPECT_LT(max_diff(in_place->forward({{p0, long_prompt, {}}, {p1, short_prompt, {}}}, pc, LogitsFor::kLast),
                     gathering->forward({{g0, long_prompt, {}}, {g1, short_prompt, {}}}, gc, LogitsFor::kLast)),
            kTolerance);
  const auto steps = tokens_of(8, V, 11);
  for (size_t t = 0; t + 1 < steps.size(); t += 2) {
    EXPECT_LT(max_diff(in_place->forward({{p0, {steps[t]}, {}}, {p1, {steps[t + 1]}, {}}}, pc, LogitsFor::kLast),
                       gathering->forward({{g0, {steps[t]}, {}}, {g1, {steps[t + 1]}, {}}}, gc, LogitsFor::kLast)),
              kTolerance)
        << "step " << t / 2;
  }
  const std::vector<int32_t> parents = {-1, 0, 0, 1, 1, 2, 4, -1};
  const auto nodes = tokens_of(parents.size(), V, 12), chain = tokens_of(3, V, 13);
  EXPECT_LT(max_diff(in_place->forward({{p0, nodes, parents}, {p1, chain, {}}}, pc, LogitsFor::kAll),
                     gathering->forward({{g0, nodes, parents}, {g1, chain, {}}}, gc, LogitsFor::kAll)),
            kTolerance);
}

INSTANTIATE_TEST_SUITE_P(Variants, CudaTest, ::testing::ValuesIn(testing::all_variants()));

}  // namespace
}  // namespace seed::models
