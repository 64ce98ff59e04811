// `seed bench spec`: the engines side by side on a workload shaped like
// Tree-of-Thoughts tree construction (SEED paper, section 4.1): for each n,
// n thought generations from one prompt (Game-of-24 "propose", different
// random streams), then n evaluations of different prompts (the "value"
// prompt of n states one step from the puzzle). Every engine runs the same
// requests; tokens/s is the median over repeats, the other figures sum
// over them. The rows of one n and temperature run their repeats in turns
// (every engine's first, then every engine's second, ...), so that a
// machine whose speed drifts over seconds (a shared VM) slows each engine
// alike, and a speedup is the median of its repeats' ratios.
//
// The best-of-n workload instead samples N chains of thought for one puzzle
// per repeat (Game-of-24 chain-of-thought prompt, N streams, one request
// group), in one batch: what STAND's shared tables are for.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "spec/engine/engine_factory.h"

namespace seed::bench {

// Under mpirun: what the launcher samples of the ranks between rows.
struct RankTime {
  int rank = 0;
  std::string role;   // "coordinator", "target" or "draft"
  double busy_s = 0;  // working so far (rank 0: CPU time of its process)
  double wall_s = 0;  // since the rank started serving
};
struct RanksSample {
  std::vector<RankTime> ranks;  // the ranks still answering
  int64_t messages = 0;         // rank 0 exchanged with the other ranks so far
  int64_t bytes = 0;
};

struct SpecBenchOptions {
  std::string target = "models/zoo/tiny-target";
  // Draft folders, each a draft model or an EDD (its config says which):
  // the model drafter gets a row per draft, side by side in one run.
  std::vector<std::string> drafts = {"models/zoo/tiny-draft"};
  std::string device = "cpu";  // where both models compute: cpu or cuda:N
  std::vector<std::string> engines = {"ar", "ar-batch", "sd", "mcsd", "seed", "seed-batch"};
  std::string workload = "tot";  // "tot" | "best-of-n"
  std::vector<int> trajectories = {1, 4, 8, 16};  // best-of-n: N of each row (replaces n)
  // What drafts (spec::DrafterKind): each drafting engine gets a row per
  // drafter, side by side in one run.
  std::vector<std::string> drafters = {"model"};
  std::string tree;               // stand: static tree file (empty: the draft shape)
  // Draft trees of the drafting engines, a row each: "shape" (sd and seed
  // a chain of at most draft_length, mcsd k_config, stand `tree`), "fixed"
  // (chains of draft_length every round; chain engines only), "sampled"
  // (the shape, drafts drawn from q at a fixed length; sampled rows of
  // drafters with a distribution only) or "pct" (pruned candidate trees;
  // drafters with probabilities only, others skip it).
  std::vector<std::string> trees = {"shape"};
  float pct_threshold = 0;  // 0: each engine measures its own (spec::EngineOptions)
  float pct_epsilon = 0.01f;
  std::string trigrams;           // aded: tri-gram table file (empty: learned from the outputs)
  std::vector<int> n = {1, 2, 3, 4, 5, 6};
  std::vector<float> temperatures = {0.2f, 1.0f};
  // k of the chain engines. 7, not 4: on a 2-core AVX-512 machine a
  // forward of 8 tokens costs 1.6-1.9 decode steps of the zoo target, and
  // the zoo pair accepts 0.94 of drafted tokens on this workload.
  int draft_length = 7;
  std::vector<int> k_config = {2, 2, 1};  // the tree of mcsd
  int repeats = 3;
  int thought_tokens = 96;             // max_new_tokens of a thought
  // max_new_tokens of an evaluation: the value completion is a worked check
  // and a label, ending at EOS (tasks/game24/task.json allows 320).
  int evaluation_tokens = 320;
  std::vector<std::string> puzzles = {"4 9 10 13", "1 4 8 8", "2 5 7 11"};  // repeat r uses puzzle r
  uint64_t seed = 0;
  // Set: every row's engine but ar's (the baseline) under step-level
  // speculation, the row's draft writing steps (spec::EngineOptions::
  // lookahead) and `step_verifier` judging them.
  std::optional<spec::LookaheadSettings> lookahead;
  spec::StepVerifierMaker step_verifier;
  // Builds each row's engine; empty: spec::make_engine. Under mpirun the
  // launcher passes one that drafts on the draft ranks (launch/distributed.h).
  std::function<std::unique_ptr<spec::Engine>(const spec::EngineOptions&)> make_engine;
  // Under mpirun the launcher's sample of the ranks; rows report the
  // differences over their repeats. Empty: single process, no rank figures.
  std::function<RanksSample()> sample_ranks;
  // Fits a row's engine options to the machine before its engine is built
  // (threads, drafters, weights; n sequences in flight) and returns the
  // thread split it chose, for the table. Empty: one drafter per sequence
  // on the threads as they are.
  std::function<std::string(spec::EngineOptions&, int n)> plan_threads;
  // What the engines of one (n, temperature) on the CPU may load together
  // for their rows to run side by side: their weight files' bytes; 0: half
  // the memory available. Past it the rows run one after another.
  int64_t side_by_side_bytes = 0;
};

// A rank's busy fraction over a row's repeats.
struct RankBusy {
  int rank = 0;
  std::string role;
  double busy = 0;  // rank 0: CPU seconds per second (above 1 with threads)
};

struct SpecBenchRow {
  std::string engine;
  std::string drafter;   // the drafting engines' drafter ("edd" for an EDD draft); "" for ar and ar-batch
  std::string draft;     // the model drafter's draft folder, by name ("tiny-draft"); "" otherwise
  std::string tree;      // its draft tree: "chain 7", "2,2,1", a file, or "pct"; "" for ar and ar-batch
  float pct_threshold = 0;  // pct: the expansion threshold it ran with
  int trajectories = 0;  // best-of-n: chains per puzzle (= n); 0 for the tot workload
  int n = 0;
  float temperature = 0;
  double tokens_per_s = 0;  // median over repeats, both phases
  double thought_tokens_per_s = 0;
  double evaluation_tokens_per_s = 0;
  // The medians over repeats of this row's tokens/s over ar's and over
  // ar-batch's in the same repeat; 0 where that engine has no row.
  double speedup_vs_ar = 0;
  double speedup_vs_ar_batch = 0;
  std::vector<double> repeat_tokens_per_s;  // each repeat's, in order
  double alpha = 0;
  double tau = 0;
  double tau_max = 0;  // (1 - alpha^(k+1)) / (1 - alpha), chains only (0 otherwise)
  double target_busy = 0;
  double draft_ms_per_token = 0;  // drafting time (summed over drafters) per generated token
  int64_t tokens = 0;  // generated over all repeats
  int64_t prompt_tokens = 0;   // over all repeats: requested...
  int64_t prefill_tokens = 0;  // ...and computed by the target (the rest came from its prefix cache)
  int64_t drafted_tokens = 0;  // over all repeats, sent to verification
  // Per target verify call: the target's forward (to logits on the host),
  // and the verifier's host work after it (PrefillStats).
  double target_forward_s_per_round = 0;
  double host_verify_s_per_round = 0;
  // Over all repeats, the target's forwards, and those that warmed up a
  // CUDA graph rather than replay one (0 off a GPU and with --eager).
  int64_t target_forwards = 0;
  int64_t graph_warm_ups = 0;
  // This process's peak resident set once the row ran (rank 0's under mpirun).
  int64_t resident_bytes = 0;
  std::string threads;  // the thread split the row ran with (plan_threads)
  // A row whose engine does step-level speculation (SpecBenchOptions::
  // lookahead): its gamma and shape ("2", "auto", "2 width 2 async"),
  // drafted steps committed over those compared, and steps a request
  // commits per round.
  std::string lookahead;
  double step_acceptance = 0;
  double steps_per_round = 0;
  // Under mpirun (sample_ranks set): each rank's busy fraction, and rank
  // 0's messages and bytes per generated token.
  std::vector<RankBusy> rank_busy;
  double messages_per_token = 0;
  double bytes_per_token = 0;
  double wire_bytes_per_drafted_token = 0;  // the same bytes over the tokens drafted
};

struct SpecBenchResult {
  std::vector<SpecBenchRow> rows;
  // Target forward time at k+1 tokens over 1 token: what verifying a chain
  // of k costs in decode steps (the limit on every speculative speedup).
  double verify_cost = 0;
  // Draft decode time over target decode time.
  double draft_cost = 0;
  nlohmann::json to_json() const;
};

// Throws kInvalidArgument naming the flag (`seed bench spec`'s) of the
// first setting of `options` that run_spec_bench cannot run: what a caller
// checks before it prints anything.
void check_spec_bench_options(const SpecBenchOptions& options);

// Calls `on_row` with each row once its n and temperature have run
// (progress), then returns them all. Checks `options` first
// (check_spec_bench_options).
SpecBenchResult run_spec_bench(const SpecBenchOptions& options,
                               const std::function<void(const SpecBenchRow&)>& on_row);

}  // namespace seed::bench
