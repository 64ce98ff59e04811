// Qwen3 against a reference forward written in plain libtorch ops from the
// definition (transformers' modeling_qwen3): q_proj, a view into heads, the
// per-head q_norm, then RoPE; the same for k with k_norm; GQA by repeating
// k and v; a tied LM head. The reference shares nothing with seed's model
// code (no fused q/k/v, kernels, cache or weight structs): it reads the
// checkpoint's tensors by name. seed loads the same folder and must give
// the same logits on CPU through the packed kernels (each this machine runs)
// and the ATen layers, cached or not, and on CUDA where there is one.
// The golden fixture (qwen3.logits.json) checks both against transformers.
#include <gtest/gtest.h>
#include <torch/torch.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <string>

#include "models/causal_lm.h"
#include "models/safetensors.h"
#include "tests/models/supported_kernels.h"
#include "tests/models/tiny_models.h"
#include "tests/tools/portable_weights.h"

namespace seed::models {
namespace {

namespace fs = std::filesystem;
using Weights = std::map<std::string, at::Tensor>;

constexpr double kTolerance = 1e-4;       // float32 logits, sums in other orders
constexpr double kCudaTolerance = 1e-3;   // as tests/models/cuda_test.cpp

// x / rms(x) * weight over the last dimension (Qwen3RMSNorm).
at::Tensor rms(const at::Tensor& x, const at::Tensor& weight, double eps) {
  return weight * (x * torch::rsqrt(x.pow(2).mean(-1, /*keepdim=*/true) + eps));
}

at::Tensor rotate_half(const at::Tensor& x) {
  const int64_t half = x.size(-1) / 2;
  return torch::cat({-x.narrow(-1, half, half), x.narrow(-1, 0, half)}, -1);
}

// Logits [T, V] of `ids` at positions 0..T-1; `qk_norm` false leaves the
// q/k norms out (to show that the comparison sees them).
at::Tensor reference_logits(const ModelConfig& c, const Weights& w, const std::vector<int32_t>& ids, bool qk_norm) {
  const int64_t T = static_cast<int64_t>(ids.size()), H = c.num_attention_heads, Hkv = c.num_key_value_heads;
  const int64_t D = c.head_dim;
  const double eps = c.rms_norm_eps;
  const at::Tensor index = torch::tensor(std::vector<int64_t>(ids.begin(), ids.end()));
  at::Tensor x = w.at("model.embed_tokens.weight").index_select(0, index);  // [T, hidden]
  // Rotary embedding (Qwen3RotaryEmbedding, default rope): cos/sin [T, 1, D].
  const at::Tensor inv_freq = 1.0 / torch::pow(c.rope_theta, torch::arange(0, D, 2, torch::kFloat) / double(D));
  const at::Tensor freqs = torch::outer(torch::arange(T, torch::kFloat), inv_freq);
  const at::Tensor angles = torch::cat({freqs, freqs}, -1).unsqueeze(1);
  const at::Tensor cos = angles.cos(), sin = angles.sin();
  const at::Tensor future = torch::ones({T, T}, torch::kBool).triu(1);
  for (int64_t l = 0; l < c.num_hidden_layers; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    const auto weight = [&](const std::string& name) { return w.at(p + name); };
    const at::Tensor h = rms(x, weight("input_layernorm.weight"), eps);
    at::Tensor q = torch::linear(h, weight("self_attn.q_proj.weight")).view({T, H, D});
    at::Tensor k = torch::linear(h, weight("self_attn.k_proj.weight")).view({T, Hkv, D});
    const at::Tensor v = torch::linear(h, weight("self_attn.v_proj.weight")).view({T, Hkv, D});
    if (qk_norm) {
      q = rms(q, weight("self_attn.q_norm.weight"), eps);
      k = rms(k, weight("self_attn.k_norm.weight"), eps);
    }
    q = q * cos + rotate_half(q) * sin;
    k = k * cos + rotate_half(k) * sin;
    // repeat_kv: query head i reads kv head i / (H / Hkv).
    const at::Tensor keys = k.repeat_interleave(H / Hkv, 1), values = v.repeat_interleave(H / Hkv, 1);
    at::Tensor scores = torch::einsum("thd,shd->hts", {q, keys}) / std::sqrt(double(D));  // [H, T, T]
    scores = scores.masked_fill(future, -std::numeric_limits<float>::infinity());
    const at::Tensor out = torch::einsum("hts,shd->thd", {torch::softmax(scores, -1), values}).reshape({T, H * D});
    x = x + torch::linear(out, weight("self_attn.o_proj.weight"));
    const at::Tensor g = rms(x, weight("post_attention_layernorm.weight"), eps);
    x = x + torch::linear(torch::silu(torch::linear(g, weight("mlp.gate_proj.weight"))) *
                              torch::linear(g, weight("mlp.up_proj.weight")),
                          weight("mlp.down_proj.weight"));
  }
  const at::Tensor head = c.tie_word_embeddings ? w.at("model.embed_tokens.weight") : w.at("lm_head.weight");
  return torch::linear(rms(x, w.at("model.norm.weight"), eps), head);
}

class Qwen3ReferenceTest : public ::testing::Test {
 protected:
  // A tiny Qwen3 (4 heads of 12 over a hidden size of 32, 2 kv heads, tied)
  // written as a model folder. The q/k norm weights spread over [0, 2], so
  // that leaving them out or misapplying them shows.
  void SetUp() override {
    config_ = testing::tiny_config("qwen3");
    ASSERT_NE(config_.q_size(), config_.hidden_size);
    dir_ = fs::temp_directory_path() / ("seed_qwen3_reference_" + std::to_string(::getpid()));
    NamedTensors tensors;
    for (const auto& [name, shape] : testing::checkpoint_layout(config_)) {
      at::Tensor t = testing::portable_tensor(name, shape, /*seed=*/5);  // norms in 1 +- 0.2
      if (name.find("q_norm") != std::string::npos || name.find("k_norm") != std::string::npos) t = 5 * t - 4;
      weights_[name] = t;
      tensors.emplace_back(name, t);
    }
    ASSERT_EQ(weights_.count("model.layers.1.self_attn.k_norm.weight"), 1u);
    fs::create_directories(dir_);
    config_.save((dir_ / "config.json").string());
    write_checkpoint(dir_.string(), tensors);
    const at::Tensor spread = weights_.at("model.layers.0.self_attn.q_norm.weight");
    ASSERT_GT((spread.max() - spread.min()).item<double>(), 1.0);
    for (int32_t i = 0; i < 19; ++i) ids_.push_back((i * 37 + 11) % static_cast<int32_t>(config_.vocab_size));
    expected_ = reference_logits(config_, weights_, ids_, /*qk_norm=*/true);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // seed's logits of ids_: the first 11 tokens at once, then one at a time.
  at::Tensor cached_logits(const CausalLM& model) const {
    KvCache cache = model.make_cache({/*block_size=*/4});
    const SequenceId seq = cache.create();
    const std::vector<int32_t> prompt(ids_.begin(), ids_.begin() + 11);
    std::vector<at::Tensor> rows = {model.forward({{seq, prompt, {}}}, cache, LogitsFor::kAll)[0]};
    for (size_t t = prompt.size(); t < ids_.size(); ++t) {
      rows.push_back(model.forward({{seq, {ids_[t]}, {}}}, cache, LogitsFor::kLast));
    }
    return torch::cat(rows, 0).cpu();
  }

  static double max_diff(const at::Tensor& a, const at::Tensor& b) { return (a - b).abs().max().item<double>(); }

  ModelConfig config_;
  fs::path dir_;
  Weights weights_;
  std::vector<int32_t> ids_;
  at::Tensor expected_;  // [T, V]
};

TEST_F(Qwen3ReferenceTest, Qwen3CpuLayersEqualTheReferenceOnEveryKernel) {
  for (CpuKernel kernel : testing::supported_kernels()) {
    LoadOptions options;
    options.cpu_kernel = kernel;
    const auto model = CausalLM::load(dir_.string(), options);
    EXPECT_LT(max_diff(cached_logits(*model), expected_), kTolerance) << cpu_kernel_name(kernel);
  }
}

TEST_F(Qwen3ReferenceTest, Qwen3AtenLayersAndFullForwardEqualTheReference) {
  LoadOptions options;
  options.fused_cpu_layers = false;  // the ATen layers CUDA runs
  const auto model = CausalLM::load(dir_.string(), options);
  EXPECT_LT(max_diff(cached_logits(*model), expected_), kTolerance);
  torch::NoGradGuard no_grad;
  const at::Tensor full = model->forward_full(torch::tensor(std::vector<int64_t>(ids_.begin(), ids_.end())).view({1, -1}));
  EXPECT_LT(max_diff(full[0], expected_), kTolerance);  // training's path
}

TEST_F(Qwen3ReferenceTest, Qwen3CudaEqualsTheReference) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  LoadOptions options;
  options.device = "cuda:0";
  EXPECT_LT(max_diff(cached_logits(*CausalLM::load(dir_.string(), options)), expected_), kCudaTolerance);
}

// The comparison can tell: without the q/k norms the reference is far off.
TEST_F(Qwen3ReferenceTest, Qwen3ReferenceSeesTheQkNorms) {
  const at::Tensor unnormed = reference_logits(config_, weights_, ids_, /*qk_norm=*/false);
  EXPECT_GT(max_diff(unnormed, expected_), 100 * kTolerance);
}

}  // namespace
}  // namespace seed::models
