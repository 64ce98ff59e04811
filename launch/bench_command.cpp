// `seed bench ...`: speed measurements printed as tables (and JSON).
#include <algorithm>
#include <cstdint>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include <iostream>

#include "bench/attention_bench.h"
#include "bench/forward_bench.h"
#include "bench/gemm_bench.h"
#include "bench/search_bench.h"
#include "bench/spec_bench.h"
#include "launch/commands.h"
#include "launch/counted.h"
#include "launch/model_option.h"
#include "launch/problem_concurrency.h"
#include "launch/pct_options.h"
#include "launch/puzzles_option.h"
#include "launch/tokenize_commands.h"
#include "launch/runtime.h"
#include "launch/distributed.h"
#include "launch/lookahead_run.h"
#include "models/base/atomic_file.h"
#include "models/base/error.h"
#include "models/panel_gemm.h"
#include "tasks/step_checkers.h"

namespace seed::launch {
namespace {

struct BenchForwardOptions {
  std::string model_dir;
  std::string device = "cpu";
  std::string json_path;
  bool gather_attention = false;
  bench::ForwardBenchOptions bench;
};

// How the read bandwidth was taken: on CPU the fastest of the read
// patterns, each listed; on a GPU one pass of sums.
std::string read_patterns(const bench::ForwardBenchResult& r) {
  if (r.read_bandwidth_by_pattern.size() < 2) return "a pass over the weights as held";
  std::vector<std::string> rates;
  for (const auto& [pattern, bandwidth] : r.read_bandwidth_by_pattern) {
    rates.push_back(fmt::format("{} {:.1f}", pattern, bandwidth / 1e9));
  }
  return fmt::format("the fastest over the weights as held, by streams a thread: {} GB/s", fmt::join(rates, ", "));
}

void print_forward_report(const BenchForwardOptions& options, const bench::ForwardBenchResult& r) {
  const bench::ContextFigures& first = r.contexts.front();
  std::cout << fmt::format("model     {}  ({:.2f}M params, {:.1f} MB of weights read per token)\n",
                           options.model_dir, r.params / 1e6, r.weight_bytes / 1e6)
            << fmt::format("threads   {}  (libtorch intra-op)\n", torch::get_num_threads())
            << fmt::format("runtime   {}\n", startup_settings())
            << fmt::format("kernel    {}, {} weights x {} rows\n", r.kernel.empty() ? "libtorch" : r.kernel,
                           r.weights_dtype, r.x_dtype)
            << fmt::format("bandwidth read {:.1f} GB/s  ({})\n", r.read_bandwidth / 1e9, read_patterns(r))
            << fmt::format("memory    {:.1f} MB resident at peak, {:.2f}x the weights\n", r.resident_bytes / 1e6,
                           static_cast<double>(r.resident_bytes) / r.weight_bytes)
            << "decode    at batch 1; bound: (weights + KV) / read bandwidth, each repeat against its own pass\n"
            << fmt::format("          {:>8} {:>10} {:>10} {:>9} {:>7} {:>9}\n", "context", "tokens/s", "ms/token",
                           "KV MB", "bound", "relative");
  for (const bench::ContextFigures& c : r.contexts) {
    std::cout << fmt::format("          {:>8} {:>10.1f} {:>10.3f} {:>9.1f} {:>7.2f} {:>9.2f}\n", c.context_tokens,
                             c.decode_tokens_per_s, 1e3 * c.decode_seconds_per_token, c.kv_bytes / 1e6,
                             c.bandwidth_bound_fraction, c.decode_relative);
  }
  std::cout << fmt::format("          of a decode step at {}: LM head {:.3f} ms ({:.0f}%), sampling {:.3f} ms ({:.0f}%)\n",
                           first.context_tokens, 1e3 * r.lm_head_seconds,
                           100 * r.lm_head_seconds / first.decode_seconds_per_token, 1e3 * r.sampling_seconds,
                           100 * r.sampling_seconds / first.decode_seconds_per_token)
            << fmt::format("prefill   {:8.1f} tokens/s  ({} tokens)\n", r.prefill_tokens_per_s,
                           options.bench.prefill_tokens);
  if (r.graph_warm_ups > 0) {
    std::cout << fmt::format("graphs    {} CUDA graphs captured; {} forwards warmed one up (untimed)\n",
                             r.graphs_captured, r.graph_warm_ups);
  }
  for (const bench::ContextFigures& c : r.contexts) {
    std::cout << fmt::format("forward time of k tokens relative to 1 (after {} cached tokens):\n", c.context_tokens)
              << "          k     ";
    for (const auto& [k, ratio] : c.forward_time_ratio) std::cout << fmt::format("{:>7}", k);
    std::cout << "\n          time  ";
    for (const auto& [k, ratio] : c.forward_time_ratio) std::cout << fmt::format("{:>7.2f}", ratio);
    std::cout << "\n          bound ";
    for (const auto& [k, fraction] : c.verify_bound_fraction) std::cout << fmt::format("{:>7.2f}", fraction);
    std::cout << "  (fraction of the bandwidth bound)\n";
  }
}

void run_bench_forward(const BenchForwardOptions& options, const GlobalOptions& global) {
  models::LoadOptions load = model_load_options(global, options.device);
  load.paged_attention = !options.gather_attention;
  auto model = models::CausalLM::load(options.model_dir, load);
  const bench::ForwardBenchResult result = bench::run_forward_bench(*model, options.bench);
  print_forward_report(options, result);
  if (!options.json_path.empty()) write_file_atomically(options.json_path, result.to_json().dump(2) + "\n");
}

struct BenchGemmOptions {
  std::string model_dir;
  int repeats = 11;
  std::vector<int64_t> rows = {1, 2, 4, 8, 16, 32};
};

void run_bench_gemm(const BenchGemmOptions& options, const GlobalOptions& global) {
  auto model = models::CausalLM::load(options.model_dir, model_load_options(global, "cpu"));
  const auto rows = bench::run_gemm_bench(*model, options.rows, options.repeats);
  const models::Linear& probe = model->weights().layers.at(0).gate;
  const models::WeightDtype dtype = models::weight_dtype_of(probe.dtype());
  std::cout << fmt::format("all weight matrices of one forward of {}, {} thread(s), medians of {}; seed's kernel "
                           "{} on {} weights x {} rows, OpenBLAS on float32\n",
                           options.model_dir, torch::get_num_threads(), options.repeats,
                           models::cpu_kernel_name(probe.kernel), models::weight_dtype_name(dtype),
                           models::panel_gemm_rounds_x(probe.kernel, dtype) ? "bfloat16" : "float32")
            << fmt::format("{:>6} {:>12} {:>12} {:>10} {:>14}\n", "rows", "seed ms", "OpenBLAS ms", "speedup",
                           "seed GFMA/s");
  for (const auto& row : rows) {
    std::cout << fmt::format("{:>6} {:>12.3f} {:>12.3f} {:>9.2f}x {:>14.1f}\n", row.rows, 1e3 * row.panel_seconds,
                             1e3 * row.blas_seconds, row.blas_seconds / row.panel_seconds, row.panel_gfma_per_s);
  }
}

struct BenchAttentionOptions {
  std::string model_dir;
  int repeats = 5;
  std::vector<int64_t> contexts = {2048, 8192};
  std::vector<int64_t> rows = {1, 4, 8, 16};
};

void run_bench_attention(const BenchAttentionOptions& options, const GlobalOptions& global) {
  auto model = models::CausalLM::load(options.model_dir, model_load_options(global, "cpu"));
  const auto rows = bench::run_attention_bench(*model, options.contexts, options.rows, options.repeats);
  const models::ModelConfig& c = model->config();
  std::cout << fmt::format("attention of one forward of {} ({} layers, {} query heads on {} kv heads of {}), {} "
                           "thread(s), kernel {}, medians of {}; k rows of a chain after the context\n",
                           options.model_dir, c.num_hidden_layers, c.num_attention_heads, c.num_key_value_heads,
                           c.head_dim, torch::get_num_threads(), models::cpu_kernel_name(model->weights().cpu_kernel),
                           options.repeats)
            << fmt::format("{:>8} {:>6} {:>10} {:>10} {:>8} {:>9}\n", "context", "rows", "ms", "relative", "GB/s",
                           "GFLOP/s");
  double one_row = 0;
  for (const auto& row : rows) {
    if (row.rows == options.rows.front()) one_row = row.seconds;
    std::cout << fmt::format("{:>8} {:>6} {:>10.3f} {:>10.2f} {:>8.1f} {:>9.1f}\n", row.context, row.rows,
                             1e3 * row.seconds, row.seconds / one_row, row.bytes_per_s / 1e9, row.flops_per_s / 1e9);
  }
}

struct BenchSpecOptions {
  std::string json_path;
  bench::SpecBenchOptions bench;
  LookaheadOptions lookahead;  // gamma 0: none
};

void print_spec_row(const bench::SpecBenchRow& r) {
  const std::string tau_max = r.tau_max > 0 ? fmt::format("{:.2f}", r.tau_max) : "-";
  const std::string tree = r.pct_threshold > 0 ? fmt::format("{} {:.3f}", r.tree, r.pct_threshold) : r.tree;
  const auto speedup = [](double x) { return x > 0 ? fmt::format("{:.2f}x", x) : std::string("-"); };
  // A row that drafted nothing has no acceptance rate (as `seed run` shows it).
  const std::string alpha = r.drafted_tokens > 0 ? fmt::format("{:.3f}", r.alpha) : "-";
  std::cout << fmt::format("{:<11} {:<7} {:<10} {:>2} {:>5.1f} {:>7} {:>9.1f} {:>9.1f} {:>9.1f} {:>8} {:>8} {:>6} "
                           "{:>5.2f} {:>7} {:>6.2f} {:>8.3f}\n",
                           r.engine, r.drafter.empty() ? "-" : r.drafter, tree.empty() ? "-" : tree, r.n,
                           r.temperature, r.threads, r.tokens_per_s, r.thought_tokens_per_s,
                           r.evaluation_tokens_per_s, speedup(r.speedup_vs_ar), speedup(r.speedup_vs_ar_batch),
                           alpha, r.tau, tau_max, r.target_busy, r.draft_ms_per_token);
  if (!r.lookahead.empty()) {
    std::cout << fmt::format("            lookahead {}: step acceptance {:.3f}, {:.2f} steps per request and round\n",
                             r.lookahead, r.step_acceptance, r.steps_per_round);
  }
  if (r.graph_warm_ups > 0) {
    std::cout << fmt::format("            CUDA graphs: {} of {} target forwards warmed one up (ran a new shape "
                             "eagerly or captured it)\n",
                             r.graph_warm_ups, r.target_forwards);
  }
  std::cout << std::flush;
}

// Under mpirun: each row's busy fraction per rank and rank 0's message
// volume per generated token, as a second table under the first.
void print_rank_table(const bench::SpecBenchResult& result) {
  if (result.rows.empty() || result.rows.front().rank_busy.empty()) return;
  std::cout << "ranks: busy = time in target or drafter calls / wall (rank 0: its CPU time / wall); messages and "
               "bytes rank 0 exchanged per generated token\n"
            << fmt::format("{:<11} {:>2} {:>5} {:>9} {:>10}", "engine", "n", "T", "msgs/tok", "bytes/tok");
  for (const bench::RankBusy& b : result.rows.front().rank_busy) {
    std::cout << fmt::format(" {:>13}", fmt::format("{} {}", b.rank, b.role));
  }
  std::cout << "\n";
  for (const bench::SpecBenchRow& r : result.rows) {
    std::cout << fmt::format("{:<11} {:>2} {:>5.1f} {:>9.2f} {:>10.0f}", r.engine, r.n, r.temperature,
                             r.messages_per_token, r.bytes_per_token);
    for (const bench::RankBusy& b : r.rank_busy) std::cout << fmt::format(" {:>13.3f}", b.busy);
    std::cout << "\n";
  }
}

// What rank 0's Coordinator knows of the ranks now, for the rank table.
bench::RanksSample sample_ranks(parallel::Coordinator& coordinator) {
  bench::RanksSample sample;
  for (const parallel::RankUsage& u : coordinator.usage()) {
    sample.ranks.push_back({u.rank, parallel::rank_role_name(coordinator.layout().role(u.rank)), u.busy_s, u.wall_s});
  }
  const parallel::MessageCounts c = coordinator.counts();
  sample.messages = c.sent + c.received;
  sample.bytes = c.sent_bytes + c.received_bytes;
  return sample;
}

void run_bench_spec(const BenchSpecOptions& options) {
  const bench::SpecBenchOptions& o = options.bench;
  std::cout << fmt::format("workload {}, drafters {}{}{}; target {}, draft {}; k = {}, mcsd tree k_config = {}; {} "
                           "thought tokens, {} evaluation tokens; medians of {}, each n and T's rows "
                           "taking them in turns; vs ar, vs batch: the median of a repeat's tokens/s over ar's and "
                           "ar-batch's in the same turn; "
                           "threads per row: target+drafters x threads; draft ms: drafting time per generated token\n",
                           o.workload, fmt::join(o.drafters, " "),
                           o.tree.empty() ? "" : " (tree " + o.tree + ")",
                           o.trigrams.empty() ? "" : " (tri-grams " + o.trigrams + ")", o.target,
                           fmt::join(o.drafts, " "),
                           o.draft_length, fmt::join(o.k_config, ","), o.thought_tokens, o.evaluation_tokens,
                           counted(o.repeats, "repeat"));
  bool header = false;
  const bench::SpecBenchResult result = bench::run_spec_bench(o, [&](const bench::SpecBenchRow& row) {
    if (!header) {
      header = true;
      std::cout << fmt::format("{:<11} {:<7} {:<10} {:>2} {:>5} {:>7} {:>9} {:>9} {:>9} {:>8} {:>8} {:>6} {:>5} {:>7} "
                               "{:>6} {:>8}\n",
                               "engine", "drafter", "tree", "n", "T", "threads", "tok/s", "thought", "eval", "vs ar",
                               "vs batch", "alpha", "tau", "tau_max", "busy", "draft ms");
    }
    print_spec_row(row);
  });
  print_rank_table(result);
  double verify_share = 0;
  int64_t resident = 0;
  for (const bench::SpecBenchRow& r : result.rows) {
    if (r.target_forward_s_per_round > 0) {
      verify_share = std::max(verify_share, r.host_verify_s_per_round / r.target_forward_s_per_round);
    }
    resident = std::max(resident, r.resident_bytes);
  }
  std::cout << fmt::format("host: verification takes at most {:.2f}% of the target's forward per round; peak "
                           "resident memory {:.1f} MB\n",
                           100 * verify_share, resident / 1e6);
  std::cout << fmt::format("limits: verifying k+1 = {} tokens costs {:.2f} target decode steps; a draft decode "
                           "step costs {:.3f} of the target's\n",
                           o.draft_length + 1, result.verify_cost, result.draft_cost);
  if (!options.json_path.empty()) write_file_atomically(options.json_path, result.to_json().dump(2) + "\n");
}

struct BenchSearchOptions {
  std::string json_path;
  int concurrency = 0;  // --concurrency; 0: auto
  bench::SearchBenchOptions bench;
};

void run_bench_search(const BenchSearchOptions& options) {
  const bench::SearchBenchOptions& o = options.bench;
  std::cout << fmt::format("{} on {} (first {}), engine {}; the target's prompt work with its KV prefix "
                           "cache off and on\n",
                           o.search, o.task_dir, counted(o.limit, "problem"), o.engine.engine.name())
            << fmt::format("{:<7} {:>8} {:>9} {:>10} {:>10} {:>9} {:>12} {:>10} {:>9} {:>8}\n", "prefix", "correct",
                           "in flight", "prompt", "prefilled", "tokens", "prefill/tok", "KV MB", "evicted", "wall s")
            << std::flush;
  const bench::SearchBenchResult result = bench::run_search_bench(o, [](const bench::SearchBenchRow& r) {
    std::cout << fmt::format("{:<7} {:>4}/{:<3} {:>9} {:>10} {:>10} {:>9} {:>12.2f} {:>10.1f} {:>9} {:>8.1f}\n",
                             r.prefix_cache ? "on" : "off", r.correct, r.problems, r.concurrency, r.prompt_tokens,
                             r.prefill_tokens,
                             r.tokens, r.prefill_per_token(), r.kv_peak_bytes / 1e6, r.evicted_blocks, r.wall_s)
              << std::flush;
  });
  const bench::SearchBenchRow& off = result.rows.front();
  const bench::SearchBenchRow& on = result.rows.back();
  const double speed = on.wall_s > 0 ? off.wall_s / on.wall_s : 0.0;  // above 1: faster with the cache
  std::cout << fmt::format("prefix cache: {:.2f}x fewer prompt tokens computed; wall time {:.1f} s with the cache "
                           "against {:.1f} s without ({:.2f}x the speed); answers and generated tokens {}\n",
                           on.prefill_tokens ? double(off.prefill_tokens) / double(on.prefill_tokens) : 0.0,
                           on.wall_s, off.wall_s, speed, result.identical() ? "identical" : "DIFFER");
  if (!options.json_path.empty()) write_file_atomically(options.json_path, result.to_json().dump(2) + "\n");
}

}  // namespace

void add_bench_command(CLI::App& app, const GlobalOptions& global) {
  CLI::App* bench = app.add_subcommand("bench", "Measure speed; prints tables (and --json)");
  add_bench_tokenize_command(*bench);
  bench->require_subcommand(1);

  auto options = std::make_shared<BenchForwardOptions>();
  CLI::App* forward = bench->add_subcommand(
      "forward", "Decode and prefill tokens/s, bandwidth-bound fraction, and k-token forward cost");
  add_model_option(forward, &options->model_dir, "Hugging Face model folder");
  forward->add_option("--device", options->device, "cpu or cuda:N")->capture_default_str();
  forward->add_option("--repeats", options->bench.repeats, "Repeats per figure (medians)")
      ->check(positive_integer())
      ->capture_default_str();
  forward->add_option("--decode-tokens", options->bench.decode_tokens, "Tokens per decode repeat")
      ->check(positive_integer())
      ->capture_default_str();
  forward->add_option("--prefill-tokens", options->bench.prefill_tokens, "Prompt length for prefill")
      ->check(positive_integer())
      ->capture_default_str();
  forward->add_option("--context-tokens", options->bench.context_tokens,
                      "Tokens in the cache before each decode step and k-token forward; several are "
                      "timed in turns, relative to the first")
      ->check(positive_integer())
      ->capture_default_str();
  forward->add_option("--json", options->json_path, "Also write the figures to this JSON file");
  forward->add_flag("--gather-attention", options->gather_attention,
                    "GPU: decode and verification gather each sequence's keys beside a mask instead of reading "
                    "the paged KV cache in place (for comparison)");
  forward->callback([options, &global] { run_bench_forward(*options, global); });

  auto gemm_options = std::make_shared<BenchGemmOptions>();
  CLI::App* gemm = bench->add_subcommand(
      "gemm", "The matrix products of one forward: seed's panel kernel against OpenBLAS, by row count");
  add_model_option(gemm, &gemm_options->model_dir, "Hugging Face model folder");
  gemm->add_option("--repeats", gemm_options->repeats, "Repeats (medians)")
      ->check(positive_integer())
      ->capture_default_str();
  gemm->add_option("--rows", gemm_options->rows, "Row counts to measure")->capture_default_str();
  gemm->callback([gemm_options, &global] { run_bench_gemm(*gemm_options, global); });

  auto attention_options = std::make_shared<BenchAttentionOptions>();
  CLI::App* attention = bench->add_subcommand(
      "attention", "The attention of one forward alone, read from the paged KV cache: k verified rows by context");
  add_model_option(attention, &attention_options->model_dir, "Hugging Face model folder");
  attention->add_option("--repeats", attention_options->repeats, "Repeats (medians)")
      ->check(positive_integer())
      ->capture_default_str();
  attention->add_option("--context-tokens", attention_options->contexts, "Tokens in the cache before the rows")
      ->check(positive_integer())
      ->capture_default_str();
  attention->add_option("--rows", attention_options->rows, "Row counts to measure (relative to the first)")
      ->check(positive_integer())
      ->capture_default_str();
  attention->callback([attention_options, &global] { run_bench_attention(*attention_options, global); });

  auto spec_options = std::make_shared<BenchSpecOptions>();
  bench::SpecBenchOptions& so = spec_options->bench;
  CLI::App* spec = bench->add_subcommand(
      "spec", "Engines side by side on a ToT-shaped workload: tokens/s, speedup vs ar and vs ar-batch, alpha, tau, "
              "target busy; under mpirun also each rank's busy fraction and messages and bytes per token");
  spec->add_option("--target", so.target, "Target model folder")->check(CLI::ExistingDirectory)->capture_default_str();
  spec->add_option("--draft", so.drafts,
                   "Draft folders, draft models or EDDs (--drafter model runs a row with each)")
      ->check(CLI::ExistingDirectory)
      ->capture_default_str();
  spec->add_option("--device", so.device,
                   "cpu or cuda:N (target and draft); under mpirun, cuda: each rank a GPU of its node in turn")
      ->capture_default_str();
  spec->add_option("--engines", so.engines, "Engines, in table order")->capture_default_str();
  spec->add_option("--n", so.n, "Parallel requests per phase")->capture_default_str();
  spec->add_option("--workload", so.workload,
                   "tot: thoughts then evaluations per puzzle; best-of-n: N chains of thought per puzzle "
                   "(--trajectories, temperature 0.7 unless --temperatures)")
      ->check(CLI::IsMember({"tot", "best-of-n"}))
      ->capture_default_str();
  spec->add_option("--trajectories", so.trajectories, "best-of-n: chains per puzzle, one row each")
      ->capture_default_str();
  spec->add_option("--drafter", so.drafters,
                   "What drafts for the speculative engines (several: a row each): " + spec::drafter_kind_names())
      ->capture_default_str();
  spec->add_option("--tree", so.tree, "stand: static draft tree file (default: the draft shape)");
  spec->add_option("--trees", so.trees,
                   "Draft trees of the drafting engines (several: a row each): shape (chains for sd and seed, "
                   "requests drafting 0 to --draft-length tokens as pays; --k-config for mcsd) | fixed "
                   "(chains of --draft-length every round) | sampled (as fixed, sampled requests drawing their "
                   "drafts from the draft's distribution: --sampled-drafts) | pct (pruned candidate trees; "
                   "drafters with probabilities)")
      ->capture_default_str();
  add_pct_options(spec, &so.pct_threshold, &so.pct_epsilon);
  spec->add_option("--trigrams", so.trigrams,
                   "aded: tri-gram table file from `seed trigrams` (default: learned from the target's outputs)");
  CLI::Option* temperatures =
      spec->add_option("--temperatures", so.temperatures, "Sampling temperatures")->capture_default_str();
  spec->add_option("--draft-length", so.draft_length, "k of the chain engines")
      ->check(positive_integer())
      ->capture_default_str();
  spec->add_option("--k-config", so.k_config, "Children per depth of the mcsd tree")->capture_default_str();
  spec->add_option("--repeats", so.repeats, "Repeats per row (medians), the rows of each n and T in turns")
      ->check(positive_integer())
      ->capture_default_str();
  spec->add_option("--thought-tokens", so.thought_tokens, "max_new_tokens of a thought")->capture_default_str();
  spec->add_option("--evaluation-tokens", so.evaluation_tokens, "max_new_tokens of an evaluation")->capture_default_str();
  add_puzzles_option(spec, &so.puzzles, "Game-of-24 puzzles, one per repeat");
  spec->add_option("--seed", so.seed, "Random seed of the requests")->capture_default_str();
  spec->add_option("--json", spec_options->json_path, "Also write the rows to this JSON file");
  spec_options->lookahead.verifier = "game24";  // the workload's steps are Game-of-24 steps
  spec->add_option_function<std::string>(
      "--lookahead", [spec_options](const std::string& value) { parse_lookahead(value, spec_options->lookahead); },
      "Step-level speculation over every engine but ar (the baseline): GAMMA drafted steps, or auto");
  add_lookahead_shape_options(spec, &spec_options->lookahead);
  spec->add_option("--step-verifier", spec_options->lookahead.verifier,
                   "--lookahead: " + tasks::step_verifier_list())
      ->capture_default_str();
  spec->callback([spec_options, temperatures, &global] {
    if (spec_options->bench.workload == "best-of-n" && temperatures->count() == 0) {
      spec_options->bench.temperatures = {0.7f};
    }
    bench::check_spec_bench_options(spec_options->bench);  // before anything is printed
    spec::EngineOptions models;
    models.target = spec_options->bench.target;
    models.draft = spec_options->bench.drafts.front();
    models.tree = spec_options->bench.tree;  // what draft ranks' model-free drafters need
    models.trigrams = spec_options->bench.trigrams;
    run_with_engines(global, models, [&](const EngineMaker& make_engine, parallel::Coordinator* coordinator) {
      BenchSpecOptions options = *spec_options;
      SEED_CHECK(coordinator == nullptr || options.bench.drafts.size() == 1, kInvalidArgument)
          << "--draft: under mpirun the draft ranks load one draft folder; give one";
      options.bench.make_engine = make_engine;
      if (options.lookahead.gamma > 0) {
        options.bench.lookahead = lookahead_settings(options.lookahead);
        options.bench.step_verifier = step_verifier_maker(options.lookahead);
      }
      options.bench.plan_threads = [&](spec::EngineOptions& engine, int n) {
        const ThreadPlan plan = plan_engine_threads(global, engine, n, /*quiet=*/true);
        return plan.drafters > 0 ? fmt::format("{}+{}x{}", plan.target_threads, plan.drafters, plan.draft_threads)
                                 : std::to_string(plan.target_threads);
      };
      if (coordinator) options.bench.sample_ranks = [coordinator] { return sample_ranks(*coordinator); };
      run_bench_spec(options);
    });
  });

  auto search_options = std::make_shared<BenchSearchOptions>();
  bench::SearchBenchOptions& sb = search_options->bench;
  sb.engine.target = "models/zoo/tiny-target";
  sb.engine.draft = "models/zoo/tiny-draft";
  sb.engine.engine = spec::EngineKind::kSeedBatch;  // `seed run`'s default
  CLI::App* search_bench = bench->add_subcommand(
      "search", "A search over a task's problems with the KV prefix cache off and on: prompt tokens computed, "
                "KV memory, wall time, and whether results agree");
  search_bench->add_option("--task", sb.task_dir, "Task folder (task.json)")->required()->check(CLI::ExistingDirectory);
  search_bench->add_option("--data", sb.data.data_path, "Data file replacing task.json's data.path");
  search_bench->add_option("--search", sb.search, "Search algorithm")->capture_default_str();
  search_bench->add_option("--limit", sb.limit, "The task's first N problems")
      ->check(positive_integer())
      ->capture_default_str();
  search_bench->add_option_function<std::string>(
                  "--engine", [&sb](const std::string& name) { sb.engine.engine = spec::EngineKind::parse(name); },
                  spec::engine_kind_names())
      ->default_str(sb.engine.engine.name());
  search_bench->add_option("--target", sb.engine.target, "Target model folder")->capture_default_str();
  search_bench->add_option("--draft", sb.engine.draft, "Draft model folder")->capture_default_str();
  search_bench->add_option("--kv-cache-mb", sb.engine.kv_cache_mb, "KV cache budget per model in MiB (0 = automatic)")
      ->check(non_negative_integer())
      ->capture_default_str();
  search_bench->add_option("--seed", sb.seed, "Run seed")->capture_default_str();
  search_bench->add_option("--json", search_options->json_path, "Also write the rows to this JSON file");
  add_concurrency_option(search_bench, &search_options->concurrency);
  search_bench->callback([search_options, &global] {
    check_text_model_folder(search_options->bench.engine.target, "--target");
    run_with_engines(global, search_options->bench.engine, [&](const EngineMaker& make_engine) {
      BenchSearchOptions options = *search_options;
      options.bench.data.data_dir = global.data_dir;
      plan_engine_threads(global, options.bench.engine, 0);
      options.bench.make_engine = make_engine;
      options.bench.problems_in_flight = [&](const spec::Engine& engine, const search::Search& search,
                                             size_t problems) {
        return plan_problem_concurrency(options.concurrency, engine, options.bench.engine, search, global.cores,
                                        problems)
            .problems_in_flight;
      };
      run_bench_search(options);
    });
  });
}

}  // namespace seed::launch
