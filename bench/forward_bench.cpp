#include "bench/forward_bench.h"

#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <functional>

#include "models/base/median.h"
#include "models/base/sampling.h"
#include "models/panel_gemm.h"

namespace seed::bench {
namespace {

// Median wall time of `fn` over `repeats` runs, after one warm-up run.
double median_seconds(int repeats, const std::function<void()>& fn) {
  fn();
  std::vector<double> times;
  for (int r = 0; r < repeats; ++r) {
    const auto start = std::chrono::steady_clock::now();
    fn();
    times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return median(times);
}

// Reads one value back: on CUDA this waits for the queued kernels, so that
// the timer measures the work and not its launch.
void wait_for(const at::Tensor& result) { result.flatten()[0].item<float>(); }

std::vector<int32_t> filler_tokens(int64_t n, int64_t vocab) {
  std::vector<int32_t> tokens(n);
  for (int64_t i = 0; i < n; ++i) tokens[i] = static_cast<int32_t>((i * 7919 + 13) % vocab);
  return tokens;
}

}  // namespace

nlohmann::json ForwardBenchResult::to_json() const {
  nlohmann::json ratios = nlohmann::json::object();
  for (const auto& [k, ratio] : forward_time_ratio) ratios[std::to_string(k)] = ratio;
  return {{"params", params},
          {"weight_bytes", weight_bytes},
          {"kernel", kernel},
          {"weights_dtype", weights_dtype},
          {"x_dtype", x_dtype},
          {"copy_bandwidth_gb_s", copy_bandwidth / 1e9},
          {"read_bandwidth_gb_s", read_bandwidth / 1e9},
          {"decode_tokens_per_s", decode_tokens_per_s},
          {"prefill_tokens_per_s", prefill_tokens_per_s},
          {"bandwidth_bound_fraction", bandwidth_bound_fraction},
          {"lm_head_ms", lm_head_seconds * 1e3},
          {"sampling_ms", sampling_seconds * 1e3},
          {"forward_time_ratio", ratios}};
}

ForwardBenchResult run_forward_bench(models::CausalLM& model, const ForwardBenchOptions& options) {
  c10::InferenceMode inference;
  const models::ModelConfig& config = model.config();
  ForwardBenchResult result;
  result.params = config.num_parameters();
  result.weight_bytes = model.weights().parameter_bytes();
  const models::Linear& probe = model.weights().layers.at(0).gate;
  result.kernel = probe.panels.defined() ? models::cpu_kernel_name(probe.kernel) : "";
  const models::WeightDtype weights_dtype = models::weight_dtype_of(probe.weight.scalar_type());
  result.weights_dtype = models::weight_dtype_name(weights_dtype);
  result.x_dtype = probe.panels.defined() && models::panel_gemm_rounds_x(probe.kernel, weights_dtype) ? "bfloat16"
                                                                                                      : "float32";

  // Bandwidth on a buffer the size of the weights, so that it sits in the
  // same level of the memory hierarchy as the weights do during decode.
  at::Tensor source = torch::ones({result.weight_bytes / 4}, model.tensor_options());
  at::Tensor target = torch::empty_like(source);
  const double copy_s = median_seconds(options.repeats, [&] { wait_for(target.copy_(source)); });
  result.copy_bandwidth = 2.0 * static_cast<double>(source.nbytes()) / copy_s;
  const double read_s = median_seconds(options.repeats, [&] { wait_for(source.sum()); });
  result.read_bandwidth = static_cast<double>(source.nbytes()) / read_s;

  const int64_t vocab = config.vocab_size;
  models::KvCache cache = model.make_cache();
  const auto context = filler_tokens(options.context_tokens, vocab);
  const auto decode_inputs = filler_tokens(options.decode_tokens, vocab);
  const double decode_s = median_seconds(options.repeats, [&] {
    const models::SequenceId seq = cache.create();
    model.forward({{seq, {context[0]}, {}}}, cache, models::LogitsFor::kLast);
    for (int32_t token : decode_inputs) {
      wait_for(model.forward({{seq, {token}, {}}}, cache, models::LogitsFor::kLast));
    }
    cache.release(seq);
  });
  result.decode_seconds_per_token = decode_s / options.decode_tokens;
  result.decode_tokens_per_s = 1.0 / result.decode_seconds_per_token;
  const double bound_s = result.weight_bytes / std::max(result.copy_bandwidth, result.read_bandwidth);
  result.bandwidth_bound_fraction = bound_s / result.decode_seconds_per_token;

  // The parts of a decode step that grow with the vocabulary: the LM head's
  // one-row product, and turning its logits into a sampled token on the
  // host (softmax at temperature 1, the draw; a top-p cut adds a partial
  // sort whose size depends on how peaked the model is).
  torch::NoGradGuard no_grad;
  const at::Tensor hidden = torch::randn({1, config.hidden_size}, model.tensor_options());
  const models::Linear& lm_head = model.weights().lm_head;
  result.lm_head_seconds = median_seconds(options.repeats * 4, [&] { wait_for(lm_head(hidden)); });
  const at::Tensor logits = lm_head(hidden).to(torch::kCPU).contiguous();
  std::vector<float> probs(vocab);
  const SamplingParams sampling;
  result.sampling_seconds = median_seconds(options.repeats * 4, [&] {
    sampling_distribution(logits.data_ptr<float>(), vocab, sampling, probs.data());
    sample_from(probs.data(), vocab, 0.5);
  });

  const auto prompt = filler_tokens(options.prefill_tokens, vocab);
  const double prefill_s = median_seconds(options.repeats, [&] {
    const models::SequenceId seq = cache.create();
    wait_for(model.forward({{seq, prompt, {}}}, cache, models::LogitsFor::kLast));
    cache.release(seq);
  });
  result.prefill_tokens_per_s = options.prefill_tokens / prefill_s;

  // k-token forwards on a cached context, as verification runs them.
  const models::SequenceId seq = cache.create();
  model.forward({{seq, context, {}}}, cache, models::LogitsFor::kLast);
  std::map<int64_t, double> seconds;
  for (int64_t k : options.widths) {
    const auto tokens = filler_tokens(k, vocab);
    seconds[k] = median_seconds(options.repeats * 4, [&] {
      wait_for(model.forward({{seq, tokens, {}}}, cache, models::LogitsFor::kAll));
      cache.truncate(seq, options.context_tokens);
    });
  }
  for (const auto& [k, s] : seconds) result.forward_time_ratio[k] = s / seconds.begin()->second;
  return result;
}

}  // namespace seed::bench
