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

INSTANTIATE_TEST_SUITE_P(Variants, CudaTest, ::testing::ValuesIn(testing::all_variants()));

}  // namespace
}  // namespace seed::models
