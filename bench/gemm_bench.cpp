#include "bench/gemm_bench.h"

#include <torch/torch.h>

#include <algorithm>
#include <chrono>

#include "models/base/error.h"
#include "models/panel_gemm.h"

namespace seed::bench {

std::vector<GemmBenchRow> run_gemm_bench(models::CausalLM& model, const std::vector<int64_t>& row_counts,
                                         int repeats) {
  SEED_CHECK(models::panel_gemm_supported(), kInvalidArgument) << "this CPU has no AVX-512: seed uses BLAS only";
  SEED_CHECK(model.tensor_options().device().is_cpu(), kInvalidArgument) << "bench gemm measures CPU kernels";
  c10::InferenceMode inference;
  // The model's projections, and BLAS-layout twins of them.
  std::vector<const models::Linear*> panel;
  std::vector<models::Linear> blas;
  auto add = [&](const models::Linear& linear) {
    panel.push_back(&linear);
    models::Linear twin;
    twin.weight = linear.weight.contiguous();
    twin.bias = linear.bias;
    twin.weight_t = twin.weight.t().contiguous();
    blas.push_back(std::move(twin));
  };
  for (const auto& layer : model.weights().layers) {
    for (const models::Linear* linear : {&layer.qkv, &layer.o, &layer.gate, &layer.up, &layer.down}) add(*linear);
  }
  add(model.weights().lm_head);

  std::vector<GemmBenchRow> rows;
  for (int64_t k : row_counts) {
    std::vector<at::Tensor> inputs;
    double fmas = 0;
    for (const models::Linear* linear : panel) {
      inputs.push_back(torch::randn({k, linear->weight.size(1)}));
      fmas += static_cast<double>(k) * linear->weight.numel();
    }
    auto median_seconds = [&](auto&& one_pass) {
      one_pass();  // warm-up
      std::vector<double> times;
      for (int r = 0; r < repeats; ++r) {
        const auto start = std::chrono::steady_clock::now();
        one_pass();
        times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
      }
      std::sort(times.begin(), times.end());
      return times[times.size() / 2];
    };
    GemmBenchRow row;
    row.rows = k;
    row.panel_seconds = median_seconds([&] {
      for (size_t i = 0; i < panel.size(); ++i) (*panel[i])(inputs[i]);
    });
    row.blas_seconds = median_seconds([&] {
      for (size_t i = 0; i < blas.size(); ++i) blas[i](inputs[i]);
    });
    row.panel_gfma_per_s = fmas / row.panel_seconds / 1e9;
    rows.push_back(row);
  }
  return rows;
}

}  // namespace seed::bench
