#include "bench/forward_bench.h"

#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <limits>

#include "bench/median_seconds.h"
#include "bench/resident_memory.h"
#include "models/base/counter_rng.h"
#include "models/base/median.h"
#include "models/base/sampling.h"
#include "models/panel_gemm.h"

namespace seed::bench {
namespace {


// Reads one value back: on CUDA this waits for the queued kernels, so that
// the timer measures the work and not its launch.
void wait_for(const at::Tensor& result) { result.flatten()[0].item<float>(); }

// Every matrix a forward reads, as held.
std::vector<at::Tensor> matrices_held(const models::LlamaWeights& w) {
  std::vector<at::Tensor> held;
  const auto add = [&](const models::Linear& l) { held.push_back(l.panels.defined() ? l.panels : l.weight); };
  for (const auto& layer : w.layers) {
    for (const models::Linear* l : {&layer.qkv, &layer.o, &layer.gate, &layer.up, &layer.down}) add(*l);
  }
  add(w.lm_head);
  return held;
}

// Seconds of one pass over `held`, each thread's share read as kStreams
// interleaved streams, as the matrix kernels read several panels at once,
// and with kPrefetch each stream's lines asked for kPanelPrefetchBytes
// ahead, as the kernels ask for theirs. On CPU a xor of 64-bit words split
// over the intra-op threads (the bytes' values do not matter, and integer
// ops take no floating-point assists), into one 64-byte line of
// accumulators that the compiler keeps in vector registers. On a GPU their
// sums, queued back to back.
template <int64_t kStreams, bool kPrefetch>
double pass_seconds(const std::vector<at::Tensor>& held) {
  constexpr int64_t kLine = 8;  // words a stream reads per step
  constexpr int64_t kAhead = models::kPanelPrefetchBytes / sizeof(uint64_t);
  std::atomic<uint64_t> sink{0};
  const auto start = std::chrono::steady_clock::now();
  at::Tensor last;
  for (const at::Tensor& t : held) {
    if (!t.is_cpu()) {  // queued back to back, waited for once
      last = t.sum();
      continue;
    }
    const auto* words = static_cast<const uint64_t*>(t.data_ptr());
    at::parallel_for(0, t.nbytes() / sizeof(uint64_t), 1 << 16, [&](int64_t begin, int64_t end) {
      const int64_t stream_words = (end - begin) / (kStreams * kLine) * kLine;
      uint64_t line[kLine] = {};
      for (int64_t i = 0; i < stream_words; i += kLine) {
        for (int64_t s = 0; s < kStreams; ++s) {
          const uint64_t* step = words + begin + s * stream_words + i;
          if constexpr (kPrefetch) __builtin_prefetch(step + kAhead);
          for (int64_t j = 0; j < kLine; ++j) line[j] ^= step[j];
        }
      }
      uint64_t all = 0;
      for (int64_t i = begin + kStreams * stream_words; i < end; ++i) all ^= words[i];
      for (const uint64_t word : line) all ^= word;
      sink.fetch_xor(all, std::memory_order_relaxed);
    });
  }
  if (last.defined()) wait_for(last);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Seconds of a pass over `held` by each read pattern, by name: on CPU one,
// four and eight streams a thread, each without and with prefetching, since
// which reads fastest depends on the CPU (a lone Zen 5 thread reads eight
// streams at half the speed of one or four; a Xeon reads one faster
// prefetched) and a bound set by a pattern the CPU reads slowly put decode
// above it; on a GPU one pass of sums.
std::vector<std::pair<std::string, double>> weights_pass_seconds(const std::vector<at::Tensor>& held) {
  if (!held.empty() && !held.front().is_cpu()) return {{"sums", pass_seconds<1, false>(held)}};
  return {{"1", pass_seconds<1, false>(held)},
          {"4", pass_seconds<4, false>(held)},
          {"8", pass_seconds<8, false>(held)},
          {"1 prefetched", pass_seconds<1, true>(held)},
          {"4 prefetched", pass_seconds<4, true>(held)},
          {"8 prefetched", pass_seconds<8, true>(held)}};
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

nlohmann::json ContextFigures::to_json() const {
  nlohmann::json ratios = nlohmann::json::object(), verify_fractions = nlohmann::json::object();
  for (const auto& [k, ratio] : forward_time_ratio) ratios[std::to_string(k)] = ratio;
  for (const auto& [k, fraction] : verify_bound_fraction) verify_fractions[std::to_string(k)] = fraction;
  return {{"context_tokens", context_tokens},
          {"kv_bytes", kv_bytes},
          {"decode_tokens_per_s", decode_tokens_per_s},
          {"bandwidth_bound_fraction", bandwidth_bound_fraction},
          {"decode_relative", decode_relative},
          {"forward_time_ratio", ratios},
          {"verify_bound_fraction", verify_fractions}};
}

nlohmann::json ForwardBenchResult::to_json() const {
  nlohmann::json by_pattern = nlohmann::json::object();
  for (const auto& [pattern, bandwidth] : read_bandwidth_by_pattern) by_pattern[pattern] = bandwidth / 1e9;
  nlohmann::json figures = {{"params", params},
                            {"weight_bytes", weight_bytes},
                            {"kernel", kernel},
                            {"weights_dtype", weights_dtype},
                            {"x_dtype", x_dtype},
                            {"read_bandwidth_gb_s", read_bandwidth / 1e9},
                            {"read_bandwidth_gb_s_by_pattern", by_pattern},
                            {"prefill_tokens_per_s", prefill_tokens_per_s},
                            {"lm_head_ms", lm_head_seconds * 1e3},
                            {"sampling_ms", sampling_seconds * 1e3},
                            {"resident_bytes", resident_bytes},
                            {"graphs_captured", graphs_captured},
                            {"graph_warm_ups", graph_warm_ups},
                            {"contexts", nlohmann::json::array()}};
  for (const ContextFigures& context : contexts) figures["contexts"].push_back(context.to_json());
  figures.update(contexts.front().to_json());
  return figures;
}

ForwardBenchResult run_forward_bench(models::CausalLM& model, const ForwardBenchOptions& options) {
  c10::InferenceMode inference;
  const models::ModelConfig& config = model.config();
  ForwardBenchResult result;
  result.params = config.num_parameters();
  result.weight_bytes = model.weights().bytes_read_per_token();
  const models::Linear& probe = model.weights().layers.at(0).gate;
  result.kernel = probe.panels.defined() ? models::cpu_kernel_name(probe.kernel) : "";
  const models::WeightDtype weights_dtype = models::weight_dtype_of(probe.dtype());
  result.weights_dtype = models::weight_dtype_name(weights_dtype);
  result.x_dtype = probe.panels.defined() && models::panel_gemm_rounds_x(probe.kernel, weights_dtype) ? "bfloat16"
                                                                                                      : "float32";

  // One sequence per context; each decode repeat cuts it back to its
  // context.
  const int64_t vocab = config.vocab_size;
  models::KvCache cache = model.make_cache();
  const auto decode_inputs = filler_tokens(options.decode_tokens, vocab);
  const size_t n_contexts = options.context_tokens.size();
  std::vector<models::SequenceId> seqs;
  for (int64_t context_tokens : options.context_tokens) {
    seqs.push_back(cache.create());
    prefill(model, cache, seqs.back(), filler_tokens(context_tokens, vocab));
    ContextFigures figures;
    figures.context_tokens = context_tokens;
    figures.kv_bytes = context_tokens * cache.bytes_per_token();
    result.contexts.push_back(figures);
  }
  const auto decode_seconds = [&](size_t c) {
    const auto start = std::chrono::steady_clock::now();
    for (int32_t token : decode_inputs) {
      wait_for(model.forward({{seqs[c], {token}, {}}}, cache, models::LogitsFor::kLast));
    }
    cache.truncate(seqs[c], options.context_tokens[c]);
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / options.decode_tokens;
  };
  const std::vector<at::Tensor> weights = matrices_held(model.weights());
  for (size_t c = 0; c < n_contexts; ++c) decode_seconds(c);  // warm-up
  // Each repeat: passes over the weights, then decode at every context in
  // turn.
  std::vector<double> pass_s;  // the fastest pattern's, per repeat
  std::vector<std::pair<std::string, std::vector<double>>> pattern_s;  // in weights_pass_seconds' order
  std::vector<std::vector<double>> decode_s(n_contexts), bound_fraction(n_contexts), relative(n_contexts);
  for (int r = 0; r < options.repeats; ++r) {
    double fastest = std::numeric_limits<double>::infinity();
    const auto passes = weights_pass_seconds(weights);
    pattern_s.resize(passes.size());
    for (size_t p = 0; p < passes.size(); ++p) {
      pattern_s[p].first = passes[p].first;
      pattern_s[p].second.push_back(passes[p].second);
      fastest = std::min(fastest, passes[p].second);
    }
    pass_s.push_back(fastest);
    const double bandwidth = result.weight_bytes / pass_s.back();
    for (size_t c = 0; c < n_contexts; ++c) {
      decode_s[c].push_back(decode_seconds(c));
      const double bound_s = static_cast<double>(result.weight_bytes + result.contexts[c].kv_bytes) / bandwidth;
      bound_fraction[c].push_back(bound_s / decode_s[c].back());
      relative[c].push_back(decode_s[0].back() / decode_s[c].back());
    }
  }
  result.read_bandwidth = result.weight_bytes / median(pass_s);
  for (const auto& [pattern, seconds] : pattern_s) {
    result.read_bandwidth_by_pattern.emplace_back(pattern, result.weight_bytes / median(seconds));
  }
  for (size_t c = 0; c < n_contexts; ++c) {
    ContextFigures& figures = result.contexts[c];
    figures.decode_seconds_per_token = median(decode_s[c]);
    figures.decode_tokens_per_s = 1.0 / figures.decode_seconds_per_token;
    figures.bandwidth_bound_fraction = median(bound_fraction[c]);
    figures.decode_relative = median(relative[c]);
  }

  // The parts of a decode step that grow with the LM head's rows (the
  // vocabulary, or a draft's cut of it): the head's one-row product, and
  // turning its logits into a sampled token on the host (softmax at
  // temperature 1, the race every engine draws by; a top-p cut adds a
  // partial sort whose size depends on how peaked the model is).
  torch::NoGradGuard no_grad;
  const at::Tensor hidden = torch::randn({1, config.hidden_size}, model.tensor_options());
  const models::Linear& lm_head = model.weights().lm_head;
  result.lm_head_seconds = median_seconds(options.repeats * 4, [&] { wait_for(lm_head(hidden)); });
  const at::Tensor logits = lm_head(hidden).to(torch::kCPU, torch::kFloat).contiguous();
  const int64_t columns = logits.size(1);
  std::vector<float> probs(static_cast<size_t>(columns));
  const SamplingParams sampling;
  result.sampling_seconds = median_seconds(options.repeats * 4, [&] {
    sampling_distribution(logits.data_ptr<float>(), columns, sampling, probs.data());
    race_from(probs.data(), columns, stream_bits({}));
  });

  // With CUDA graphs a new shape's first forward runs eagerly and its
  // second captures: both are warm-ups.
  const auto forward_seconds = [](int repeats, const std::function<void()>& forward) {
    forward();
    return median_seconds(repeats, forward);
  };
  const auto prompt = filler_tokens(options.prefill_tokens, vocab);
  const double prefill_s = forward_seconds(options.repeats, [&] {
    const models::SequenceId prompt_seq = cache.create();
    wait_for(model.forward({{prompt_seq, prompt, {}}}, cache, models::LogitsFor::kLast));
    cache.release(prompt_seq);
  });
  result.prefill_tokens_per_s = options.prefill_tokens / prefill_s;

  // k-token forwards on each cached context, as verification runs them.
  for (size_t c = 0; c < n_contexts; ++c) {
    ContextFigures& figures = result.contexts[c];
    const double bound_s = static_cast<double>(result.weight_bytes + figures.kv_bytes) / result.read_bandwidth;
    // Each width's forwards in turns, as they are compared with each other.
    std::vector<std::function<void()>> forwards;
    for (int64_t k : options.widths) {
      forwards.push_back([&, k, tokens = filler_tokens(k, vocab)] {
        wait_for(model.forward({{seqs[c], tokens, {}}}, cache, models::LogitsFor::kAll));
        cache.truncate(seqs[c], figures.context_tokens);
      });
      forwards.back()();  // with median_seconds_in_turns' own, the two warm-ups of a CUDA graph
    }
    const std::vector<double> seconds = median_seconds_in_turns(options.repeats * 4, forwards);
    for (size_t i = 0; i < seconds.size(); ++i) {
      figures.forward_time_ratio[options.widths[i]] = seconds[i] / seconds.front();
      figures.verify_bound_fraction[options.widths[i]] = bound_s / seconds[i];
    }
  }
  result.resident_bytes = peak_resident_bytes();
  result.graphs_captured = model.captured_graphs();
  result.graph_warm_ups = model.graph_warm_ups();
  return result;
}

}  // namespace seed::bench
