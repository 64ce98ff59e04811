#include "bench/spec_bench.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <system_error>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>
#include <omp.h>

#include "bench/forward_bench.h"
#include "bench/resident_memory.h"
#include "models/causal_lm.h"
#include "models/device_memory.h"
#include "models/base/error.h"
#include "models/base/median.h"
#include "models/base/sampling.h"
#include "spec/engine/engine_factory.h"
#include "tasks/corpus.h"
#include "tasks/corpus_formats.h"
#include "tasks/game24.h"

namespace seed::bench {
namespace {

struct Workload {
  std::vector<spec::GenRequest> thoughts, evaluations;
};

bool best_of_n(const SpecBenchOptions& o) { return o.workload == "best-of-n"; }

// Thought request `i` of repeat `repeat` on `puzzle`, from `prompt`.
spec::GenRequest thought_request(const SpecBenchOptions& o, std::string_view prompt, const tasks::Numbers& puzzle,
                                 float temperature, int repeat, int i, uint64_t group) {
  spec::GenRequest r;
  r.sampling.temperature = temperature;
  r.seed = o.seed + static_cast<uint64_t>(repeat);
  r.stream = static_cast<uint64_t>(i);
  r.group = group;
  r.kind = spec::RequestKind::kThought;
  r.max_new_tokens = o.thought_tokens;
  r.prompt = tasks::render_prompt(prompt, {{"input", tasks::numbers_text(puzzle)}});
  return r;
}

// Best-of-n: n chains of thought for the puzzle, one group.
Workload make_best_of_n(const SpecBenchOptions& o, const tasks::Numbers& puzzle, int n, float temperature,
                        int repeat, uint64_t group) {
  Workload w;
  for (int i = 0; i < n; ++i) {
    w.thoughts.push_back(thought_request(o, tasks::kGame24CotPrompt, puzzle, temperature, repeat, i, group));
  }
  return w;
}

// Repeat r of row (n, temperature): puzzle r, streams distinct per request,
// one request group per puzzle (the warm-up's, `group` 0, stays apart).
Workload make_workload(const SpecBenchOptions& o, int n, float temperature, int repeat, uint64_t group) {
  const tasks::Numbers puzzle = tasks::parse_puzzle(o.puzzles[static_cast<size_t>(repeat) % o.puzzles.size()]);
  if (best_of_n(o)) return make_best_of_n(o, puzzle, n, temperature, repeat, group);
  const std::vector<tasks::Game24Step> steps = tasks::game24_next_steps(puzzle);
  Workload w;
  for (int i = 0; i < n; ++i) {
    spec::GenRequest r = thought_request(o, tasks::kGame24ProposePrompt, puzzle, temperature, repeat, i, group);
    w.thoughts.push_back(r);
    // Different states: spread over the puzzle's successors.
    const tasks::Game24Step& step = steps[(static_cast<size_t>(i) * 7) % steps.size()];
    r.kind = spec::RequestKind::kEvaluation;
    r.stream = static_cast<uint64_t>(n + i);
    r.max_new_tokens = o.evaluation_tokens;
    r.prompt = tasks::render_prompt(tasks::kGame24ValuePrompt, {{"input", tasks::numbers_text(step.left)}});
    w.evaluations.push_back(r);
  }
  return w;
}

// Adds to `total` what the ranks in both samples did between them.
void add_ranks_between(const RanksSample& before, const RanksSample& after, RanksSample& total) {
  total.messages += after.messages - before.messages;
  total.bytes += after.bytes - before.bytes;
  for (const RankTime& a : after.ranks) {
    const auto same_rank = [&](const RankTime& t) { return t.rank == a.rank; };
    const auto b = std::find_if(before.ranks.begin(), before.ranks.end(), same_rank);
    if (b == before.ranks.end()) continue;
    auto sum = std::find_if(total.ranks.begin(), total.ranks.end(), same_rank);
    if (sum == total.ranks.end()) sum = total.ranks.insert(total.ranks.end(), RankTime{a.rank, a.role, 0, 0});
    sum->busy_s += a.busy_s - b->busy_s;
    sum->wall_s += a.wall_s - b->wall_s;
  }
}

// The ranks' figures over a row's repeats (`during`: what they did then):
// busy fractions, messages and bytes per token.
void add_rank_figures(const RanksSample& during, int64_t tokens, SpecBenchRow& row) {
  const double bytes = static_cast<double>(during.bytes);
  if (row.drafted_tokens > 0) row.wire_bytes_per_drafted_token = bytes / static_cast<double>(row.drafted_tokens);
  for (const RankTime& r : during.ranks) {
    row.rank_busy.push_back({r.rank, r.role, r.wall_s > 0 ? r.busy_s / r.wall_s : 0.0});
  }
  if (tokens > 0) {
    row.messages_per_token = static_cast<double>(during.messages) / static_cast<double>(tokens);
    row.bytes_per_token = bytes / static_cast<double>(tokens);
  }
}

double tokens_per_s(const spec::RequestStats& kind, double wall_s) {
  return wall_s > 0 ? static_cast<double>(kind.generated_tokens) / wall_s : 0.0;
}

// A chain of draft_length every round, where "shape" lets requests draft
// what pays (spec::EngineOptions::adaptive_draft_length).
constexpr const char* kFixedChain = "fixed";
// Sampled requests' drafts drawn from the draft's q, a chain of
// draft_length every round (spec::EngineOptions::sample_drafts).
constexpr const char* kSampledDrafts = "sampled";

// What a row's engine drafts: its own shape, or a pruned tree; a chain
// whose requests draft 0 to k tokens is "chain 0-k", one of k drawn from q
// "chain k sampled".
std::string tree_label(const SpecBenchOptions& o, spec::EngineKind kind, const spec::EngineOptions& eo) {
  const char* drawn = eo.sample_drafts ? " sampled" : "";
  if (eo.tree == spec::kPrunedTree) return "pct";
  if (!eo.tree.empty()) return eo.tree + drawn;
  if (kind.tree_drafts()) return fmt::format("{}{}", fmt::join(o.k_config, ","), drawn);
  if (eo.adaptive_draft_length && !eo.sample_drafts) return fmt::format("chain 0-{}", o.draft_length);
  return fmt::format("chain {}{}", o.draft_length, drawn);
}

// A lookahead row's shape: "2", "auto", "2 width 2 async".
std::string lookahead_label(const spec::LookaheadSettings& lookahead) {
  std::string label = lookahead.adaptive ? "auto" : std::to_string(lookahead.gamma);
  if (lookahead.width > 1) label += " width " + std::to_string(lookahead.width);
  if (lookahead.async) label += " async";
  return label;
}

// What a group's row runs: its engine, drafter, draft folder and tree.
struct RowSpec {
  spec::EngineKind kind;
  std::string drafter, draft, tree;
};

// A row being measured: its engine, built and warmed up, and what its
// repeats have measured so far.
struct RowRun {
  SpecBenchRow row;
  std::unique_ptr<spec::Engine> engine;
  int threads = 0;  // the target's threads the row was planned with
  bool chain = false;  // a chain of draft_length every round: tau_max applies
  std::vector<double> all, thought, evaluation;  // tokens/s of each repeat
  spec::EngineStats total;
  RanksSample ranks;  // what the ranks did during the repeats
};

RowRun start_row(const SpecBenchOptions& o, const RowSpec& spec, int n, float temperature) {
  const spec::EngineKind kind = spec.kind;
  const std::string& tree = spec.tree;
  spec::EngineOptions eo;
  eo.engine = kind;
  eo.target = o.target;
  eo.draft = spec.draft;
  eo.device = o.device;
  eo.draft_length = o.draft_length;
  if (kind.drafts()) eo.drafter = spec::DrafterKind::parse(spec.drafter);
  eo.trigrams = o.trigrams;
  if (tree == spec::kPrunedTree) {
    eo.tree = spec::kPrunedTree;
    eo.pct_threshold = o.pct_threshold;
    eo.pct_epsilon = o.pct_epsilon;
  } else {
    eo.tree = o.tree;
    if (kind.tree_drafts()) eo.k_config = o.k_config;
    eo.adaptive_draft_length = tree != kFixedChain;
    eo.sample_drafts = tree == kSampledDrafts;
  }
  eo.max_batch = std::max(n, 1);
  if (o.lookahead && kind != spec::EngineKind::kAr) {
    eo.lookahead = o.lookahead;
    eo.step_verifier = o.step_verifier;
  }
  RowRun run;
  SpecBenchRow& row = run.row;
  if (o.plan_threads) {
    row.threads = o.plan_threads(eo, n);
  } else {
    eo.drafters = n;  // one drafter per sequence, as in the paper
  }
  run.engine = o.make_engine ? o.make_engine(eo) : spec::make_engine(eo);
  run.threads = omp_get_max_threads();  // as planned, and as the engine left it (step speculation takes one)
  // Warm-up: thread pools, the RoPE table, the KV-cache pools.
  const Workload warm = make_workload(o, n, temperature, 0, 0);
  run.engine->generate(warm.thoughts);

  row.engine = kind.name();
  if (kind.drafts()) {
    row.drafter = spec.drafter;
    if (eo.drafter.needs_draft_model()) {
      row.draft = std::filesystem::path(spec.draft).filename().string();
      if (models::ModelConfig::from_file((std::filesystem::path(spec.draft) / "config.json").string()).is_edd()) {
        row.drafter = "edd";
      }
    }
    row.tree = tree_label(o, kind, eo);
    row.pct_threshold = run.engine->draft_plan().pct_expand;
  }
  if (eo.lookahead) row.lookahead = lookahead_label(*eo.lookahead);
  row.trajectories = best_of_n(o) ? n : 0;
  row.n = n;
  row.temperature = temperature;
  run.chain = kind.drafts() && !kind.tree_drafts() && (tree == kFixedChain || tree == kSampledDrafts);
  return run;
}

// Repeat `r` of a started row.
void run_repeat(const SpecBenchOptions& o, RowRun& run, int r) {
  // The row's threads, as this thread's OpenMP team: at::set_num_threads
  // rebuilds ATen's pools, and on a 2-core VM the repeat after it ran
  // about a fifth slower.
  if (omp_get_max_threads() != run.threads) omp_set_num_threads(run.threads);
  const uint64_t group = static_cast<uint64_t>(r) + 1;
  const Workload w = make_workload(o, run.row.n, run.row.temperature, r, group);
  const RanksSample ranks_before = o.sample_ranks ? o.sample_ranks() : RanksSample{};
  spec::Engine& engine = *run.engine;
  engine.reset_stats();
  engine.generate(w.thoughts);
  const spec::EngineStats after_thoughts = engine.stats();
  if (!w.evaluations.empty()) engine.generate(w.evaluations);
  engine.end_group(group);
  const spec::EngineStats s = engine.stats();
  if (o.sample_ranks) add_ranks_between(ranks_before, o.sample_ranks(), run.ranks);
  run.all.push_back(s.tokens_per_s());
  run.thought.push_back(tokens_per_s(after_thoughts.thought, after_thoughts.wall_s));
  run.evaluation.push_back(tokens_per_s(s.evaluation, s.wall_s - after_thoughts.wall_s));
  spec::EngineStats& total = run.total;
  total.generated_tokens += s.generated_tokens;
  total.target_forwards += s.target_forwards;
  total.drafted_tokens += s.drafted_tokens;
  total.accepted_tokens += s.accepted_tokens;
  total.rejections += s.rejections;
  for (auto [into, from] : {std::pair{&total.thought, &s.thought}, std::pair{&total.evaluation, &s.evaluation}}) {
    into->generated_tokens += from->generated_tokens;
    into->round_tokens += from->round_tokens;
    into->target_forwards += from->target_forwards;
  }
  total.wall_s += s.wall_s;
  total.target_busy_s += s.target_busy_s;
  total.prefill += s.prefill;
  total.draft_s += s.draft_s;
  total.steps += s.steps;
}

// The row's figures once its repeats ran; frees its engine.
SpecBenchRow finish_row(const SpecBenchOptions& o, RowRun& run) {
  run.engine.reset();
  SpecBenchRow row = std::move(run.row);
  const spec::EngineStats& total = run.total;
  if (!row.lookahead.empty()) {
    row.step_acceptance = total.steps.acceptance();
    row.steps_per_round = total.steps.steps_per_round();
  }
  row.tokens_per_s = median(run.all);
  row.thought_tokens_per_s = median(run.thought);
  row.evaluation_tokens_per_s = median(run.evaluation);
  row.repeat_tokens_per_s = run.all;
  row.alpha = total.alpha();
  row.tau = total.tau();
  if (run.chain && total.drafted_tokens > 0) row.tau_max = spec::tau_max(row.alpha, o.draft_length);
  row.target_busy = total.target_busy();
  row.tokens = total.generated_tokens;
  row.prompt_tokens = total.prefill.prompt_tokens;
  row.prefill_tokens = total.prefill.computed_tokens;
  if (total.prefill.verify_rounds > 0) {
    const double rounds = static_cast<double>(total.prefill.verify_rounds);
    row.target_forward_s_per_round = total.prefill.forward_s / rounds;
    row.host_verify_s_per_round = total.prefill.host_verify_s / rounds;
  }
  row.drafted_tokens = total.drafted_tokens;
  row.target_forwards = total.target_forwards;
  row.graph_warm_ups = total.prefill.graph_warm_ups;
  row.resident_bytes = peak_resident_bytes();
  if (row.tokens > 0) row.draft_ms_per_token = 1e3 * total.draft_s / static_cast<double>(row.tokens);
  if (o.sample_ranks) add_rank_figures(run.ranks, row.tokens, row);
  return row;
}

// Bytes of the safetensors files in a model folder.
int64_t folder_weight_bytes(const std::string& folder) {
  int64_t bytes = 0;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(folder, error)) {
    if (entry.path().extension() == ".safetensors") bytes += static_cast<int64_t>(entry.file_size(error));
  }
  return bytes;
}

// The weights the rows' engines load: each its target's, and its draft
// model's where it drafts with one.
int64_t engines_weight_bytes(const SpecBenchOptions& o, const std::vector<RowSpec>& specs) {
  int64_t bytes = 0;
  for (const RowSpec& spec : specs) {
    bytes += folder_weight_bytes(o.target);
    if (spec.kind.drafts() && spec::DrafterKind::parse(spec.drafter).needs_draft_model()) {
      bytes += folder_weight_bytes(spec.draft);
    }
  }
  return bytes;
}

// The rows of a group (n, temperature), in the table's order.
std::vector<RowSpec> group_rows(const SpecBenchOptions& o, const std::vector<spec::EngineKind>& kinds,
                                float temperature) {
  std::vector<RowSpec> specs;
  for (const spec::EngineKind kind : kinds) {
    for (const std::string& drafter : kind.drafts() ? o.drafters : std::vector<std::string>{""}) {
      const bool model = kind.drafts() && spec::DrafterKind::parse(drafter).needs_draft_model();
      for (const std::string& draft : model ? o.drafts : std::vector<std::string>{o.drafts.front()}) {
        for (const std::string& tree : kind.drafts() ? o.trees : std::vector<std::string>{""}) {
          // Pruned trees need a drafter with probabilities.
          if (tree == spec::kPrunedTree && !model) continue;
          if (tree == kFixedChain && kind.tree_drafts()) continue;  // not a chain
          // Drawn drafts need a distribution to draw from, and a temperature.
          if (tree == kSampledDrafts &&
              (temperature <= 0 || !spec::DrafterKind::parse(drafter).has_draft_distribution())) {
            continue;
          }
          specs.push_back({kind, drafter, draft, tree});
        }
      }
    }
  }
  return specs;
}

// The median over repeats of `row`'s tokens/s over `base`'s in the same
// repeat (rows side by side run their repeats in turns, so a pair ran
// close together in time); 0 without a base.
double paired_speedup(const SpecBenchRow& row, const SpecBenchRow* base) {
  if (base == nullptr) return 0;
  std::vector<double> ratios;
  for (size_t r = 0; r < row.repeat_tokens_per_s.size() && r < base->repeat_tokens_per_s.size(); ++r) {
    if (base->repeat_tokens_per_s[r] > 0) ratios.push_back(row.repeat_tokens_per_s[r] / base->repeat_tokens_per_s[r]);
  }
  return ratios.empty() ? 0 : median(ratios);
}

// Runs a group's rows: side by side, their repeats in turns, where their
// engines' weights fit in the device's memory together; else one row after
// another.
std::vector<SpecBenchRow> run_group(const SpecBenchOptions& o, const std::vector<RowSpec>& specs, int n,
                                    float temperature) {
  const int64_t budget =
      o.side_by_side_bytes > 0 ? o.side_by_side_bytes : models::available_memory_bytes(c10::Device(o.device)) / 2;
  std::vector<SpecBenchRow> rows;
  if (engines_weight_bytes(o, specs) > budget) {
    if (specs.size() > 1) {
      spdlog::info("bench spec: n = {}, T = {}: the {} engines' weights would not fit in memory together; their "
                   "rows run one after another",
                   n, temperature, specs.size());
    }
    for (const RowSpec& spec : specs) {
      RowRun run = start_row(o, spec, n, temperature);
      for (int r = 0; r < o.repeats; ++r) run_repeat(o, run, r);
      rows.push_back(finish_row(o, run));
    }
    return rows;
  }
  std::vector<RowRun> runs;
  for (const RowSpec& spec : specs) runs.push_back(start_row(o, spec, n, temperature));
  for (int r = 0; r < o.repeats; ++r) {
    for (RowRun& run : runs) run_repeat(o, run, r);
  }
  for (RowRun& run : runs) rows.push_back(finish_row(o, run));
  return rows;
}

}  // namespace

nlohmann::json SpecBenchResult::to_json() const {
  nlohmann::json rows_json = nlohmann::json::array();
  for (const SpecBenchRow& r : rows) {
    nlohmann::json row = {{"engine", r.engine},
                         {"drafter", r.drafter},
                         {"draft", r.draft},
                         {"tree", r.tree},
                         {"trajectories", r.trajectories},
                         {"n", r.n},
                         {"temperature", r.temperature},
                         {"tokens_per_s", r.tokens_per_s},
                         {"thought_tokens_per_s", r.thought_tokens_per_s},
                         {"evaluation_tokens_per_s", r.evaluation_tokens_per_s},
                         {"speedup_vs_ar", r.speedup_vs_ar},
                         {"speedup_vs_ar_batch", r.speedup_vs_ar_batch},
                         {"repeat_tokens_per_s", r.repeat_tokens_per_s},
                         {"alpha", r.alpha},
                         {"tau", r.tau},
                         {"tau_max", r.tau_max},
                         {"target_busy", r.target_busy},
                         {"draft_ms_per_token", r.draft_ms_per_token},
                         {"tokens", r.tokens},
                         {"prompt_tokens", r.prompt_tokens},
                         {"prefill_tokens", r.prefill_tokens},
                         {"host_verify_s_per_round", r.host_verify_s_per_round},
                         {"target_forward_s_per_round", r.target_forward_s_per_round},
                         {"target_forwards", r.target_forwards},
                         {"graph_warm_ups", r.graph_warm_ups},
                         {"resident_bytes", r.resident_bytes},
                         {"threads", r.threads}};
    if (r.pct_threshold > 0) row["pct_threshold"] = r.pct_threshold;
    if (!r.lookahead.empty()) {
      row["lookahead"] = r.lookahead;
      row["step_acceptance"] = r.step_acceptance;
      row["steps_per_round"] = r.steps_per_round;
    }
    if (!r.rank_busy.empty()) {
      nlohmann::json ranks = nlohmann::json::array();
      for (const RankBusy& b : r.rank_busy) ranks.push_back({{"rank", b.rank}, {"role", b.role}, {"busy", b.busy}});
      row["ranks"] = ranks;
      row["messages_per_token"] = r.messages_per_token;
      row["bytes_per_token"] = r.bytes_per_token;
      row["wire_bytes_per_drafted_token"] = r.wire_bytes_per_drafted_token;
    }
    rows_json.push_back(row);
  }
  return {{"rows", rows_json}, {"verify_cost", verify_cost}, {"draft_cost", draft_cost}};
}

void check_spec_bench_options(const SpecBenchOptions& o) {
  SEED_CHECK(o.repeats >= 1, kInvalidArgument) << "--repeats must be >= 1";
  SEED_CHECK(!o.puzzles.empty(), kInvalidArgument) << "--puzzles: need at least one puzzle";
  for (int n : o.n) SEED_CHECK(n >= 1, kInvalidArgument) << "--n: " << n << " < 1";
  SEED_CHECK(o.workload == "tot" || best_of_n(o), kInvalidArgument)
      << "--workload: unknown workload '" << o.workload << "'; expected tot, best-of-n";
  for (int n : o.trajectories) SEED_CHECK(n >= 1, kInvalidArgument) << "--trajectories: " << n << " < 1";
  for (float temperature : o.temperatures) check_temperature(temperature, "--temperatures");
  SEED_CHECK(!o.drafters.empty(), kInvalidArgument) << "--drafter: need at least one drafter";
  SEED_CHECK(!o.drafts.empty(), kInvalidArgument) << "--draft: need at least one draft folder";
  for (const std::string& name : o.drafters) spec::DrafterKind::parse(name);
  for (const std::string& tree : o.trees) {
    SEED_CHECK(tree == "shape" || tree == kFixedChain || tree == kSampledDrafts || tree == spec::kPrunedTree,
               kInvalidArgument)
        << "--trees: unknown tree '" << tree << "'; expected shape, fixed, sampled, pct";
  }
  const auto& engines = spec::EngineKind::kNames;
  for (const std::string& name : o.engines) {
    SEED_CHECK(std::find(engines.begin(), engines.end(), name) != engines.end(), kInvalidArgument)
        << "--engines: unknown engine '" << name << "'; expected " << spec::engine_kind_names(", ");
  }
}

SpecBenchResult run_spec_bench(const SpecBenchOptions& o, const std::function<void(const SpecBenchRow&)>& on_row) {
  check_spec_bench_options(o);
  std::vector<spec::EngineKind> kinds;
  for (const std::string& name : o.engines) kinds.push_back(spec::EngineKind::parse(name));
  SpecBenchResult result;
  {
    ForwardBenchOptions fo;
    fo.repeats = 5;
    fo.widths = {1, o.draft_length + 1};
    // The limits at the threads and weights of the engines without drafter
    // threads.
    spec::EngineOptions eo;
    eo.engine = spec::EngineKind::kSd;
    eo.device = o.device;
    if (o.plan_threads) o.plan_threads(eo, 1);
    auto target = models::CausalLM::load(o.target, spec::load_options(eo));
    const ContextFigures t = run_forward_bench(*target, fo).contexts.front();
    result.verify_cost = t.forward_time_ratio.at(o.draft_length + 1);
    eo.target = o.target;
    eo.draft = o.drafts.front();
    auto draft = models::CausalLM::load(o.drafts.front(), spec::draft_load_options(eo));
    result.draft_cost =
        run_forward_bench(*draft, fo).contexts.front().decode_seconds_per_token / t.decode_seconds_per_token;
  }
  for (float temperature : o.temperatures) {
    for (int n : best_of_n(o) ? o.trajectories : o.n) {
      std::vector<SpecBenchRow> rows = run_group(o, group_rows(o, kinds, temperature), n, temperature);
      const auto base = [&](spec::EngineKind kind) -> const SpecBenchRow* {
        const auto it =
            std::find_if(rows.begin(), rows.end(), [&](const SpecBenchRow& r) { return r.engine == kind.name(); });
        return it == rows.end() ? nullptr : &*it;
      };
      for (SpecBenchRow& row : rows) {
        row.speedup_vs_ar = paired_speedup(row, base(spec::EngineKind::kAr));
        row.speedup_vs_ar_batch = paired_speedup(row, base(spec::EngineKind::kArBatch));
      }
      for (SpecBenchRow& row : rows) {
        on_row(row);
        result.rows.push_back(std::move(row));
      }
    }
  }
  return result;
}

}  // namespace seed::bench
