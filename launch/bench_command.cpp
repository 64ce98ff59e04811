// `seed bench ...`: speed measurements printed as tables (and JSON).
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include <fstream>
#include <iostream>

#include "bench/forward_bench.h"
#include "bench/gemm_bench.h"
#include "launch/commands.h"
#include "models/error.h"

namespace seed::launch {
namespace {

struct BenchForwardOptions {
  std::string model_dir;
  std::string device = "cpu";
  std::string json_path;
  bench::ForwardBenchOptions bench;
};

// The performance bar of the foundation issue, printed beside the results.
constexpr double kBoundFractionBar = 0.60;
constexpr double kWidth16CostBar = 3.0;

void print_forward_report(const BenchForwardOptions& options, const bench::ForwardBenchResult& r) {
  std::cout << fmt::format("model     {}  ({:.2f}M params, {:.1f} MB of weights read per token)\n",
                           options.model_dir, r.params / 1e6, r.weight_bytes / 1e6)
            << fmt::format("threads   {}  (libtorch intra-op)\n", torch::get_num_threads())
            << fmt::format("bandwidth copy {:.1f} GB/s, read {:.1f} GB/s  (buffer the size of the weights)\n",
                           r.copy_bandwidth / 1e9, r.read_bandwidth / 1e9)
            << fmt::format("decode    {:8.1f} tokens/s at batch 1  ({:.3f} ms/token)\n", r.decode_tokens_per_s,
                           1e3 * r.decode_seconds_per_token)
            << fmt::format("          {:.2f} of the bandwidth bound (weights / max bandwidth = {:.3f} ms)  "
                           "[bar >= {:.2f}]\n",
                           r.bandwidth_bound_fraction,
                           1e3 * r.weight_bytes / std::max(r.copy_bandwidth, r.read_bandwidth), kBoundFractionBar)
            << fmt::format("prefill   {:8.1f} tokens/s  ({} tokens)\n", r.prefill_tokens_per_s,
                           options.bench.prefill_tokens)
            << fmt::format("forward cost of k tokens relative to 1 (after {} cached tokens):\n",
                           options.bench.context_tokens);
  std::cout << "          k     ";
  for (const auto& [k, ratio] : r.forward_cost_ratio) std::cout << fmt::format("{:>7}", k);
  std::cout << "\n          cost  ";
  for (const auto& [k, ratio] : r.forward_cost_ratio) std::cout << fmt::format("{:>7.2f}", ratio);
  std::cout << fmt::format("   [bar: k=16 <= {:.1f}]\n", kWidth16CostBar);
}

void run_bench_forward(const BenchForwardOptions& options) {
  auto model = models::CausalLM::load(options.model_dir, {options.device});
  const bench::ForwardBenchResult result = bench::run_forward_bench(*model, options.bench);
  print_forward_report(options, result);
  if (!options.json_path.empty()) {
    std::ofstream out(options.json_path);
    SEED_CHECK(out.good(), kIo) << "cannot write " << options.json_path;
    out << result.to_json().dump(2) << "\n";
  }
}

struct BenchGemmOptions {
  std::string model_dir;
  int repeats = 11;
  std::vector<int64_t> rows = {1, 2, 4, 8, 16, 32};
};

void run_bench_gemm(const BenchGemmOptions& options) {
  auto model = models::CausalLM::load(options.model_dir);
  const auto rows = bench::run_gemm_bench(*model, options.rows, options.repeats);
  std::cout << fmt::format("all weight matrices of one forward of {}, {} thread(s), medians of {}\n",
                           options.model_dir, torch::get_num_threads(), options.repeats)
            << fmt::format("{:>6} {:>12} {:>12} {:>10} {:>14}\n", "rows", "panel ms", "OpenBLAS ms", "speedup",
                           "panel GFMA/s");
  for (const auto& row : rows) {
    std::cout << fmt::format("{:>6} {:>12.3f} {:>12.3f} {:>9.2f}x {:>14.1f}\n", row.rows, 1e3 * row.panel_seconds,
                             1e3 * row.blas_seconds, row.blas_seconds / row.panel_seconds, row.panel_gfma_per_s);
  }
}

}  // namespace

void add_bench_command(CLI::App& app, const GlobalOptions&) {
  CLI::App* bench = app.add_subcommand("bench", "Measure speed; prints tables (and --json)");
  bench->require_subcommand(1);

  auto options = std::make_shared<BenchForwardOptions>();
  CLI::App* forward = bench->add_subcommand(
      "forward", "Decode and prefill tokens/s, bandwidth-bound fraction, and k-token forward cost");
  forward->add_option("--model", options->model_dir, "Hugging Face model folder")
      ->required()
      ->check(CLI::ExistingDirectory);
  forward->add_option("--device", options->device, "cpu or cuda:N")->capture_default_str();
  forward->add_option("--repeats", options->bench.repeats, "Repeats per figure (medians)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  forward->add_option("--decode-tokens", options->bench.decode_tokens, "Tokens per decode repeat")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  forward->add_option("--prefill-tokens", options->bench.prefill_tokens, "Prompt length for prefill")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  forward->add_option("--json", options->json_path, "Also write the figures to this JSON file");
  forward->callback([options] { run_bench_forward(*options); });

  auto gemm_options = std::make_shared<BenchGemmOptions>();
  CLI::App* gemm = bench->add_subcommand(
      "gemm", "The matrix products of one forward: seed's panel kernel against OpenBLAS, by row count");
  gemm->add_option("--model", gemm_options->model_dir, "Hugging Face model folder")
      ->required()
      ->check(CLI::ExistingDirectory);
  gemm->add_option("--repeats", gemm_options->repeats, "Repeats (medians)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  gemm->add_option("--rows", gemm_options->rows, "Row counts to measure")->capture_default_str();
  gemm->callback([gemm_options] { run_bench_gemm(*gemm_options); });
}

}  // namespace seed::launch
