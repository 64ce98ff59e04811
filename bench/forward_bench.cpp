#include "bench/forward_bench.h"

#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>

#include "bench/resident_memory.h"
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

// Seconds of one pass over every matrix a forward reads, as held. On CPU a
// xor of 64-bit words split over the intra-op threads (the bytes' values do
// not matter, and integer ops take no floating-point assists); on a GPU
// their sums, queued back to back.
double weights_pass_seconds(const models::LlamaWeights& w, int repeats) {
  std::vector<at::Tensor> held;
  const auto add = [&](const models::Linear& l) { held.push_back(l.panels.defined() ? l.panels : l.weight); };
  for (const auto& layer : w.layers) {
    for (const models::Linear* l : {&layer.qkv, &layer.o, &layer.gate, &layer.up, &layer.down}) add(*l);
  }
  add(w.lm_head);
  std::atomic<uint64_t> sink{0};
  return median_seconds(repeats, [&] {
    at::Tensor last;
    for (const at::Tensor& t : held) {
      if (!t.is_cpu()) {  // queued back to back, waited for once
        last = t.sum();
        continue;
      }
      const auto* words = static_cast<const uint64_t*>(t.data_ptr());
      at::parallel_for(0, t.nbytes() / sizeof(uint64_t), 1 << 16, [&](int64_t begin, int64_t end) {
        uint64_t acc = 0;
        for (int64_t i = begin; i < end; ++i) acc ^= words[i];
        sink.fetch_xor(acc, std::memory_order_relaxed);
      });
    }
    if (last.defined()) wait_for(last);
  });
}

// Appends `tokens` to `seq` a chunk at a time, as a long prompt is
// prefilled: one forward's activations stay small at any length.
void prefill(models::CausalLM& model, models::KvCache& cache, models::SequenceId seq,
             const std::vector<int32_t>& tokens) {
  constexpr size_t kChunk = 256;
  for (size_t at = 0; at < tokens.size(); at += kChunk) {
    const std::vector<int32_t> chunk(tokens.begin() + at, tokens.begin() + std::min(tokens.size(), at + kChunk));
    model.forward({{seq, chunk, {}}}, cache, models::LogitsFor::kLast);
  }
}

std::vector<int32_t> filler_tokens(int64_t n, int64_t vocab) {
  std::vector<int32_t> tokens(n);
  for (int64_t i = 0; i < n; ++i) tokens[i] = static_cast<int32_t>((i * 7919 + 13) % vocab);
  return tokens;
}

}  // namespace

nlohmann::json ForwardBenchResult::to_json() const {
  nlohmann::json ratios = nlohmann::json::object(), verify_fractions = nlohmann::json::object();
  for (const auto& [k, ratio] : forward_time_ratio) ratios[std::to_string(k)] = ratio;
  for (const auto& [k, fraction] : verify_bound_fraction) verify_fractions[std::to_string(k)] = fraction;
  return {{"params", params},
          {"weight_bytes", weight_bytes},
          {"kernel", kernel},
          {"weights_dtype", weights_dtype},
          {"x_dtype", x_dtype},
          {"read_bandwidth_gb_s", read_bandwidth / 1e9},
          {"decode_tokens_per_s", decode_tokens_per_s},
          {"prefill_tokens_per_s", prefill_tokens_per_s},
          {"kv_bytes", kv_bytes},
          {"bandwidth_bound_fraction", bandwidth_bound_fraction},
          {"verify_bound_fraction", verify_fractions},
          {"lm_head_ms", lm_head_seconds * 1e3},
          {"sampling_ms", sampling_seconds * 1e3},
          {"forward_time_ratio", ratios},
          {"context_tokens", context_tokens},
          {"resident_bytes", resident_bytes}};
}

ForwardBenchResult run_forward_bench(models::CausalLM& model, const ForwardBenchOptions& options) {
  c10::InferenceMode inference;
  const models::ModelConfig& config = model.config();
  ForwardBenchResult result;
  result.params = config.num_parameters();
  result.weight_bytes = model.weights().parameter_bytes();
  const models::Linear& probe = model.weights().layers.at(0).gate;
  result.kernel = probe.panels.defined() ? models::cpu_kernel_name(probe.kernel) : "";
  const models::WeightDtype weights_dtype = models::weight_dtype_of(probe.dtype());
  result.weights_dtype = models::weight_dtype_name(weights_dtype);
  result.x_dtype = probe.panels.defined() && models::panel_gemm_rounds_x(probe.kernel, weights_dtype) ? "bfloat16"
                                                                                                      : "float32";

  result.read_bandwidth = result.weight_bytes / weights_pass_seconds(model.weights(), options.repeats);

  // Decode steps and k-token forwards after context_tokens cached tokens;
  // each repeat cuts the sequence back to them.
  const int64_t vocab = config.vocab_size;
  result.context_tokens = options.context_tokens;
  models::KvCache cache = model.make_cache();
  const auto context = filler_tokens(options.context_tokens, vocab);
  const auto decode_inputs = filler_tokens(options.decode_tokens, vocab);
  const models::SequenceId seq = cache.create();
  prefill(model, cache, seq, context);
  const double decode_s = median_seconds(options.repeats, [&] {
    for (int32_t token : decode_inputs) {
      wait_for(model.forward({{seq, {token}, {}}}, cache, models::LogitsFor::kLast));
    }
    cache.truncate(seq, options.context_tokens);
  });
  result.decode_seconds_per_token = decode_s / options.decode_tokens;
  result.decode_tokens_per_s = 1.0 / result.decode_seconds_per_token;
  result.kv_bytes = options.context_tokens * cache.bytes_per_token();
  const double bound_s = static_cast<double>(result.weight_bytes + result.kv_bytes) / result.read_bandwidth;
  result.bandwidth_bound_fraction = bound_s / result.decode_seconds_per_token;

  // The parts of a decode step that grow with the vocabulary: the LM head's
  // one-row product, and turning its logits into a sampled token on the
  // host (softmax at temperature 1, the draw; a top-p cut adds a partial
  // sort whose size depends on how peaked the model is).
  torch::NoGradGuard no_grad;
  const at::Tensor hidden = torch::randn({1, config.hidden_size}, model.tensor_options());
  const models::Linear& lm_head = model.weights().lm_head;
  result.lm_head_seconds = median_seconds(options.repeats * 4, [&] { wait_for(lm_head(hidden)); });
  const at::Tensor logits = lm_head(hidden).to(torch::kCPU, torch::kFloat).contiguous();
  std::vector<float> probs(vocab);
  const SamplingParams sampling;
  result.sampling_seconds = median_seconds(options.repeats * 4, [&] {
    sampling_distribution(logits.data_ptr<float>(), vocab, sampling, probs.data());
    sample_from(probs.data(), vocab, 0.5);
  });

  const auto prompt = filler_tokens(options.prefill_tokens, vocab);
  const double prefill_s = median_seconds(options.repeats, [&] {
    const models::SequenceId prompt_seq = cache.create();
    wait_for(model.forward({{prompt_seq, prompt, {}}}, cache, models::LogitsFor::kLast));
    cache.release(prompt_seq);
  });
  result.prefill_tokens_per_s = options.prefill_tokens / prefill_s;

  // k-token forwards on the cached context, as verification runs them.
  std::map<int64_t, double> seconds;
  for (int64_t k : options.widths) {
    const auto tokens = filler_tokens(k, vocab);
    seconds[k] = median_seconds(options.repeats * 4, [&] {
      wait_for(model.forward({{seq, tokens, {}}}, cache, models::LogitsFor::kAll));
      cache.truncate(seq, options.context_tokens);
    });
  }
  for (const auto& [k, s] : seconds) {
    result.forward_time_ratio[k] = s / seconds.begin()->second;
    result.verify_bound_fraction[k] = bound_s / s;
  }
  result.resident_bytes = peak_resident_bytes();
  return result;
}

}  // namespace seed::bench
