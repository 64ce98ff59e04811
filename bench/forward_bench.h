// Forward-pass benchmark of one model: what decoding and verification cost.
//
// Answers the two questions speculative decoding depends on: how close is
// batch-1 decode to the memory-bandwidth bound (weights bytes / bandwidth),
// and how much does a forward over k tokens cost relative to one token (how
// much verification width is free), at each given number of tokens already
// in the cache; and what the model and its cache hold in memory. Times are
// medians over repeats. Decode at several contexts is timed in turns within
// each repeat, beside passes over the weights, and a context's k-token
// forwards in turns too, so that a drift in the machine's bandwidth moves
// every figure that is compared alike and their ratios stay comparable.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "models/causal_lm.h"

namespace seed::bench {

struct ForwardBenchOptions {
  int repeats = 5;              // medians over this many repeats
  int decode_tokens = 32;       // tokens decoded per decode repeat
  int prefill_tokens = 128;     // prompt length for the prefill figure
  // Cached tokens before each decode step and k-token forward; every
  // context is measured, the first is the reference of decode_relative.
  std::vector<int64_t> context_tokens = {64};
  std::vector<int64_t> widths = {1, 2, 4, 8, 16};  // k of forward_time_ratio, ascending from 1
};

// Decode and k-token forwards with context_tokens already in the cache.
struct ContextFigures {
  int64_t context_tokens = 0;
  // Bytes of the context's keys and values a forward reads on top of the
  // weights (context_tokens x the cache's bytes per token).
  int64_t kv_bytes = 0;
  double decode_seconds_per_token = 0;
  double decode_tokens_per_s = 0;
  // The bandwidth-bound time of a decode step, (weight_bytes + kv_bytes) /
  // read_bandwidth, over the measured one: 1.0 would be at the bound.
  // Median over repeats, each against the weights pass beside it.
  double bandwidth_bound_fraction = 0;
  // Decode tokens/s here over decode at the first context: the median of
  // the repeats' ratios.
  double decode_relative = 1;
  // k -> time of a k-token forward over a 1-token one: how much verification
  // width is free (not what a drafted token adds: spec/engine/forward_cost.h)
  std::map<int64_t, double> forward_time_ratio;
  // k -> the bandwidth-bound fraction of a k-token forward (verification of
  // k drafted tokens), which reads the same bytes.
  std::map<int64_t, double> verify_bound_fraction;

  nlohmann::json to_json() const;
};

struct ForwardBenchResult {
  int64_t params = 0;
  int64_t weight_bytes = 0;  // bytes a decoded token reads (half-size weights count half)
  std::string kernel;        // the CPU matrix kernel (cpu_kernel_name); "" off CPU
  std::string weights_dtype; // of the projection matrices
  std::string x_dtype;       // what the kernel multiplies them with: "float32", or "bfloat16" (panel_gemm_rounds_x)
  // bytes/s of a read of the matrices as the model holds them (the bytes a
  // decode step reads, where they are: no buffer of their size beside
  // them); on CPU the fastest of six read patterns (weights_pass_seconds)
  double read_bandwidth = 0;
  // Each read pattern's bytes/s (medians over its passes), by name: streams
  // a thread, "prefetched" where each stream asks for its lines ahead; on a
  // GPU the one pass of sums, "sums"
  std::vector<std::pair<std::string, double>> read_bandwidth_by_pattern;
  double prefill_tokens_per_s = 0;
  std::vector<ContextFigures> contexts;  // as ForwardBenchOptions::context_tokens
  // One decode step's LM head (one row) and the host-side sampling of its
  // logits (softmax at temperature 1 and the draw): the parts that grow with
  // the vocabulary.
  double lm_head_seconds = 0;
  double sampling_seconds = 0;
  // Peak resident memory of the process (getrusage) after loading and
  // running: the weights, the KV blocks written, and the runtime.
  int64_t resident_bytes = 0;
  // CUDA graphs the model captured over the benchmark, and its forwards
  // that warmed one up (ran a new shape eagerly or captured it) rather than
  // replay one: 0 off a GPU and with --eager. The timed figures are medians
  // over forwards after each shape's warm-up.
  int64_t graphs_captured = 0;
  int64_t graph_warm_ups = 0;

  // The first context's figures at the top level (the figures of a run at
  // one context), every context's under "contexts".
  nlohmann::json to_json() const;
};

ForwardBenchResult run_forward_bench(models::CausalLM& model, const ForwardBenchOptions& options);

}  // namespace seed::bench
