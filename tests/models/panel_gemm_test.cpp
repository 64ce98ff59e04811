// panel_gemm: every kernel this CPU runs, for every weight dtype, equals the
// reference product for 1-33 rows and odd shapes and gives each row the
// bits of its product alone; a model on half-size
// weights computes what float32 weights of the same values compute.
#include "models/panel_gemm.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <numeric>
#include <tuple>
#include <vector>

#include "models/causal_lm.h"
#include "models/base/error.h"
#include "tests/models/tiny_models.h"
#include "tests/models/supported_kernels.h"
#include "tests/throws_error.h"

namespace seed::models {
namespace {

using testing::supported_kernels;

// y = x W^T + b through pack_panels and panel_gemm, one thread.
at::Tensor panel_product(CpuKernel kernel, const at::Tensor& x, const at::Tensor& w, const at::Tensor& bias,
                         WeightDtype dtype) {
  const int64_t M = x.size(0), K = x.size(1), N = w.size(0);
  const at::Tensor stored = w.to(scalar_type_of(dtype)).contiguous();
  const int64_t width = panel_width(kernel);
  at::Tensor panels = torch::empty({(N + width - 1) / width, panel_rows(kernel, dtype, K), width}, stored.options());
  pack_panels(kernel, dtype, stored.data_ptr(), N, K, panels.data_ptr());
  at::Tensor y = torch::full({M, N}, -7.0f);  // stray writes would show
  PanelGemmArgs args;
  args.x = x.data_ptr<float>();
  args.panels = panels.data_ptr();
  args.dtype = dtype;
  args.bias = bias.defined() ? bias.data_ptr<float>() : nullptr;
  args.y = y.data_ptr<float>();
  args.M = M;
  args.K = K;
  args.N = N;
  args.panel_begin = 0;
  args.panel_end = panels.size(0);
  panel_gemm(kernel, args);
  return y;
}

class PanelGemmTest : public ::testing::TestWithParam<std::tuple<CpuKernel, WeightDtype>> {};

TEST_P(PanelGemmTest, EqualsReferenceProductForEveryRowCountAndOddShapes) {
  const auto [kernel, dtype] = GetParam();
  at::Generator gen = at::detail::createCPUGenerator(3);
  for (const auto& [K, N] : std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {7, 63}, {100, 65}, {64, 130}, {33, 64}}) {
    const at::Tensor w = torch::randn({N, K}, gen);
    // The values the kernel sees: the weight rounded to its dtype.
    const at::Tensor w_seen = w.to(scalar_type_of(dtype)).to(torch::kDouble);
    for (bool with_bias : {false, true}) {
      const at::Tensor bias = with_bias ? torch::randn({N}, gen) : at::Tensor();
      for (int64_t M = 1; M <= 33; ++M) {
        const at::Tensor x = torch::randn({M, K}, gen);
        // Likewise x, where the kernel multiplies bfloat16 pairs.
        const at::Tensor x_seen =
            panel_gemm_rounds_x(kernel, dtype) ? x.to(torch::kBFloat16).to(torch::kDouble) : x.to(torch::kDouble);
        at::Tensor expected = torch::mm(x_seen, w_seen.t());
        if (with_bias) expected += bias.to(torch::kDouble);
        const at::Tensor y = panel_product(kernel, x, w, bias, dtype);
        const double diff = (y.to(torch::kDouble) - expected).abs().max().item<double>();
        EXPECT_LT(diff, 1e-5 * (K + 1)) << cpu_kernel_name(kernel) << " " << weight_dtype_name(dtype) << " M=" << M
                                        << " K=" << K << " N=" << N << " bias=" << with_bias;
      }
    }
  }
}

// A row's outputs are the same bits whichever rows share its product: a
// decoded token's logits equal those of the same token verified in a chain
// or a tree (causal_lm_cpu.cpp). Up to 20 rows: every tile height of each
// kernel, and rows in two groups.
TEST_P(PanelGemmTest, ARowGetsTheBitsOfItsProductAlone) {
  const auto [kernel, dtype] = GetParam();
  at::Generator gen = at::detail::createCPUGenerator(4);
  const int64_t K = 300, N = 16 * 9 + 5;  // panels in groups and one left over, a partial last one
  const at::Tensor w = torch::randn({N, K}, gen), bias = torch::randn({N}, gen);
  for (int64_t M = 2; M <= 20; ++M) {
    const at::Tensor x = torch::randn({M, K}, gen);
    const at::Tensor together = panel_product(kernel, x, w, bias, dtype);
    for (int64_t r = 0; r < M; ++r) {
      const at::Tensor alone = panel_product(kernel, x.narrow(0, r, 1).contiguous(), w, bias, dtype);
      EXPECT_TRUE(torch::equal(alone[0], together[r]))
          << cpu_kernel_name(kernel) << " " << weight_dtype_name(dtype) << " row " << r << " of " << M;
    }
  }
}

// A tied embedding is looked up in the LM head's panels (LlamaWeights::lookup).
// Every row comes back whole from every kernel's layout, whole blocks of
// 16 columns and the columns and k beyond them alike; packing runs no
// kernel instruction, so the layouts of kernels this CPU lacks are checked
// too.
TEST(PanelGemmTest, EveryLayoutUnpacksTheRowsItPacked) {
  at::Generator gen = at::detail::createCPUGenerator(8);
  for (const CpuKernel kernel :
       {CpuKernel::kAmx, CpuKernel::kAvx512Bf16, CpuKernel::kAvx512, CpuKernel::kAvx2, CpuKernel::kPortable}) {
    for (const WeightDtype dtype : {WeightDtype::kFloat32, WeightDtype::kBFloat16, WeightDtype::kFloat16}) {
      for (const auto& [K, N] :
           std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {33, 130}, {100, 65}, {64, 16}, {300, 149}}) {
        const at::Tensor w = torch::randn({N, K}, gen).to(scalar_type_of(dtype));
        const int64_t width = panel_width(kernel);
        at::Tensor panels = torch::empty({(N + width - 1) / width, panel_rows(kernel, dtype, K), width}, w.options());
        pack_panels(kernel, dtype, w.data_ptr(), N, K, panels.data_ptr());
        std::vector<int64_t> rows(N);
        std::iota(rows.begin(), rows.end(), 0);
        at::Tensor out = torch::empty({N, K}, w.options());
        unpack_panel_rows(kernel, dtype, panels.data_ptr(), K, rows.data(), N, out.data_ptr());
        EXPECT_TRUE(torch::equal(out, w)) << cpu_kernel_name(kernel) << " " << weight_dtype_name(dtype) << " K=" << K
                                          << " N=" << N;
      }
    }
  }
}

// Long rows: the AMX kernel takes a prompt's rows through each panel in
// groups that fit in L2 (16 rows at this K), so these span three groups.
TEST_P(PanelGemmTest, RowsInGroupsOnALongKEqualTheReferenceAndEachRowAlone) {
  const auto [kernel, dtype] = GetParam();
  at::Generator gen = at::detail::createCPUGenerator(7);
  const int64_t M = 37, K = 16384 + 7, N = 70;
  const at::Tensor w = torch::randn({N, K}, gen), bias = torch::randn({N}, gen), x = torch::randn({M, K}, gen);
  const at::Tensor x_seen =
      panel_gemm_rounds_x(kernel, dtype) ? x.to(torch::kBFloat16).to(torch::kDouble) : x.to(torch::kDouble);
  const at::Tensor expected =
      torch::mm(x_seen, w.to(scalar_type_of(dtype)).to(torch::kDouble).t()) + bias.to(torch::kDouble);
  const at::Tensor together = panel_product(kernel, x, w, bias, dtype);
  EXPECT_LT((together.to(torch::kDouble) - expected).abs().max().item<double>(), 1e-5 * (K + 1))
      << cpu_kernel_name(kernel) << " " << weight_dtype_name(dtype);
  for (int64_t r : {0, 15, 16, 31, 36}) {
    const at::Tensor alone = panel_product(kernel, x.narrow(0, r, 1).contiguous(), w, bias, dtype);
    EXPECT_TRUE(torch::equal(alone[0], together[r]))
        << cpu_kernel_name(kernel) << " " << weight_dtype_name(dtype) << " row " << r << " of " << M;
  }
}

INSTANTIATE_TEST_SUITE_P(SupportedKernels, PanelGemmTest,
                         ::testing::Combine(::testing::ValuesIn(supported_kernels()),
                                            ::testing::Values(WeightDtype::kFloat32, WeightDtype::kBFloat16,
                                                              WeightDtype::kFloat16)),
                         [](const auto& info) {
                           std::string name = std::string(cpu_kernel_name(std::get<0>(info.param))) + "_" +
                                              weight_dtype_name(std::get<1>(info.param));
                           std::replace(name.begin(), name.end(), '-', '_');  // gtest names: letters, digits, _
                           return name;
                         });

TEST(PanelGemmTest, ThreadsSplittingPanelsWriteDisjointColumns) {
  at::Generator gen = at::detail::createCPUGenerator(5);
  const at::Tensor w = torch::randn({200, 48}, gen), x = torch::randn({5, 48}, gen);
  const at::Tensor whole = panel_product(best_cpu_kernel(), x, w, at::Tensor(), WeightDtype::kFloat32);
  Linear linear;
  linear.weight = w;
  linear.prepare_for_inference(best_cpu_kernel());
  at::set_num_threads(2);
  EXPECT_TRUE(torch::equal(linear(x), whole));
  at::set_num_threads(1);
}

// Packed panels live for the whole run: each in a mapping of its own that
// starts on a huge page (lazy_zeros.h says why), and they multiply and
// unpack to the weight they were packed from.
TEST(PanelGemmTest, PanelsLargeEnoughForAHugePageStartOnOne) {
  at::Generator gen = at::detail::createCPUGenerator(6);
  const at::Tensor w = torch::randn({1024, 1024}, gen), x = torch::randn({3, 1024}, gen);
  const at::Tensor expected = panel_product(best_cpu_kernel(), x, w, at::Tensor(), WeightDtype::kFloat32);
  Linear linear;
  linear.weight = w;
  linear.prepare_for_inference(best_cpu_kernel(), /*keep_parameter=*/false);
  EXPECT_FALSE(linear.weight.defined());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(linear.panels.data_ptr()) % (uintptr_t{2} << 20), 0u);
  EXPECT_TRUE(torch::equal(linear(x), expected));
  EXPECT_TRUE(torch::equal(linear.unpacked(), w));
}

// A model on half-size weights equals a float32 model holding the same
// rounded values: the kernel widens exactly, and sums in the same order.
// Where the kernel multiplies bfloat16 pairs (panel_gemm_rounds_x), it
// rounds x as well, and the logits agree to bfloat16's precision instead.
TEST(HalfSizeWeightsTest, ModelLogitsEqualFloat32WeightsOfTheSameValues) {
  for (CpuKernel kernel : supported_kernels()) {
    for (WeightDtype dtype : {WeightDtype::kBFloat16, WeightDtype::kFloat16}) {
      LoadOptions half;
      half.weights_dtype = dtype;
      half.cpu_kernel = kernel;
      half.keep_parameters = true;  // the reference widens them
      auto model = CausalLM::random(testing::tiny_config("llama"), 11, half);
      EXPECT_EQ(model->weights().layers[0].gate.weight.scalar_type(), scalar_type_of(dtype));
      LlamaWeights widened = model->weights();
      widened.convert_matrices(WeightDtype::kFloat32);
      CausalLM reference(model->config(), std::move(widened), model->tensor_options());
      EXPECT_EQ(model->weights().parameter_bytes() * 2 - reference.weights().parameter_bytes(),
                [&] {
                  int64_t small = 0;  // the float32 norms count the same in both
                  for (const auto& l : model->weights().layers) small += l.input_norm.nbytes() + l.post_norm.nbytes();
                  return small + model->weights().norm.nbytes();
                }());
      // Both over float32 keys and values (make_cache would hold the half
      // model's in bfloat16).
      KvCache a(model->config(), model->tensor_options()), b = reference.make_cache();
      const std::vector<int32_t> prompt = {1, 5, 9, 2, 7};
      const at::Tensor logits_half = model->forward({{a.create(), prompt, {}}}, a, LogitsFor::kAll);
      const at::Tensor logits_float = reference.forward({{b.create(), prompt, {}}}, b, LogitsFor::kAll);
      const std::string name = std::string(cpu_kernel_name(kernel)) + " " + weight_dtype_name(dtype);
      if (!panel_gemm_rounds_x(kernel, dtype)) {
        EXPECT_TRUE(torch::equal(logits_half, logits_float)) << name;
        continue;
      }
      const double scale = logits_float.abs().max().item<double>();
      const double diff = (logits_half - logits_float).abs().max().item<double>();
      EXPECT_LT(diff, 1e-2 * scale) << name << ": max logit " << scale;
      EXPECT_GT(diff, 0.0) << name << ": x was not rounded";
    }
  }
}

TEST(CpuKernelTest, NamesRoundTripAndBadNamesAreNamed) {
  for (CpuKernel k : supported_kernels()) EXPECT_EQ(parse_cpu_kernel(cpu_kernel_name(k), "--cpu-kernel"), k);
  EXPECT_TRUE(seed::testing::throws_error([] { parse_cpu_kernel("sse9", "--cpu-kernel"); }, ErrorKind::kInvalidArgument,
                                    {"--cpu-kernel", "sse9"}));
  for (WeightDtype d : {WeightDtype::kFloat32, WeightDtype::kBFloat16, WeightDtype::kFloat16}) {
    EXPECT_EQ(parse_weight_dtype(weight_dtype_name(d), "--weights-dtype"), d);
  }
  EXPECT_TRUE(seed::testing::throws_error([] { parse_weight_dtype("int4", "--weights-dtype"); },
                                    ErrorKind::kInvalidArgument, {"--weights-dtype", "int4"}));
}

}  // namespace
}  // namespace seed::models
