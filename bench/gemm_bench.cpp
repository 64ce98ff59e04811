#include "bench/gemm_bench.h"

#include <torch/torch.h>

#include "bench/median_seconds.h"
#include "models/base/error.h"

namespace seed::bench {

std::vector<GemmBenchRow> run_gemm_bench(models::CausalLM& model, const std::vector<int64_t>& row_counts,
                                         int repeats) {
  SEED_CHECK(model.tensor_options().device().is_cpu(), kInvalidArgument) << "bench gemm measures CPU kernels";
  c10::InferenceMode inference;
  // The model's projections, and float32 copies in the layouts OpenBLAS is
  // fastest on: [out, in] for gemv (one row), [in, out] for gemm.
  std::vector<const models::Linear*> panel;
  std::vector<std::pair<at::Tensor, at::Tensor>> blas;  // (weight, weight^T)
  auto add = [&](const models::Linear& linear) {
    panel.push_back(&linear);
    const at::Tensor w = linear.unpacked().to(torch::kFloat).contiguous();
    blas.emplace_back(w, w.t().contiguous());
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
      inputs.push_back(torch::randn({k, linear->in_features()}));  // weights held packed: no `weight`
      fmas += static_cast<double>(k) * linear->in_features() * linear->out_features();
    }
    GemmBenchRow row;
    row.rows = k;
    const std::vector<double> seconds = median_seconds_in_turns(
        repeats, {[&] {
                    for (size_t i = 0; i < panel.size(); ++i) (*panel[i])(inputs[i]);
                  },
                  [&] {
                    for (size_t i = 0; i < blas.size(); ++i) {
                      if (k == 1) {
                        torch::mv(blas[i].first, inputs[i][0]);
                      } else {
                        torch::mm(inputs[i], blas[i].second);
                      }
                    }
                  }});
    row.panel_seconds = seconds[0];
    row.blas_seconds = seconds[1];
    row.panel_gfma_per_s = fmas / row.panel_seconds / 1e9;
    rows.push_back(row);
  }
  return rows;
}

}  // namespace seed::bench
