// LookaheadEngine: step-level speculation (Lookahead Reasoning, Fu et al.
// 2025: Algorithm 1, and the asynchronous version of its code).
//
// A step is the text up to and including a delimiter ("\n" by default).
// Each request keeps a tree of drafted steps (spec/lookahead/step_tree.h): the draft
// engine proposes up to `width` alternatives for the step after the
// committed text and after each drafted step, `gamma` steps deep; the target
// engine writes the step after each node's text. The verifier compares the
// target's step after a node with the node's drafted children: the first
// child that means the same is committed and becomes the root; when none
// does, the target's step is committed and the tree starts afresh. So every
// round commits at least one target step, and a drafted step accepted at
// the deepest level earns the target's next step as a bonus.
//   synchronous   each round: the draft fills the tree level by level (one
//                 batched call per level over all requests), then the
//                 target writes every node's step in one batched call, then
//                 the verifier commits;
//   asynchronous  the draft engine runs on a thread of its own and keeps
//                 the tree `gamma` steps deep while the target engine writes
//                 the steps of every node drafted so far, one batched call
//                 after another; what a commit cuts off is dropped, and an
//                 answer for a dropped node is thrown away.
// The two engines are any seed engines, so token-level speculation runs
// inside each step when the target engine is sd or seed. Not lossless: a
// committed drafted step is the verifier's judgement, not the target's
// distribution; report accuracy beside speed. The first alternative is the
// draft's greedy step, the others are sampled: a committed step means what
// the target's own sampled step means whatever the draft proposes, so the
// proposal sets only how often a step is accepted, and one proposal is
// accepted most often when it is the likeliest step. A greedy request
// drafts one.
// A drafted step cut short (no delimiter within max_step_tokens, or the
// request's budget) is never accepted; a target step is committed as it is.
// Adaptive gamma, synchronous: each round takes the lookahead that commits
// the most steps per second by what was measured so far: the step
// acceptance, a draft call's time, and the target call's time for each
// number of steps per request (fitted by a line where not yet seen; the
// notes' model, lookahead_theory.h, assumes it constant, which holds on a
// GPU with batch headroom and not on a CPU). That can be 0: the target
// alone, which then writes the rest of each request in one call. One round
// in kExploreEvery tries a neighbour of the choice instead, so that costs
// and acceptance stay measured. Asynchronous: the depth the notes' theory
// makes best, ceil(target call / draft call), from the measured times.
// Adaptive, both: the target engine's token draft length (a chain) is the
// one the notes' token-level model makes best, from the target engine's
// measured token acceptance and the cost of a drafted token over a target
// forward (its own setting until it has drafted). A drafted token's cost
// is its draft step plus what it adds to the forward that verifies it,
// fitted from the target engine's forwards (ForwardCost): about nothing on
// a GPU with headroom, a tenth of a forward or more on a CPU.
// Calls that read a request's prompt for the first time also prefill it;
// they are measured apart and count only until steady calls are measured.
#pragma once

#include <c10/core/Device.h>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "models/device_stream.h"
#include "spec/api/engine.h"
#include "spec/lookahead/forward_cost.h"
#include "spec/engine/request_run.h"
#include "spec/lookahead/step_tree.h"
#include "spec/lookahead/step_verifier.h"

namespace seed::spec {

struct LookaheadSettings {
  int gamma = 2;                 // drafted steps per round (adaptive: the first rounds')
  bool adaptive = false;         // choose gamma each round from what was measured
  int max_gamma = 8;             // adaptive: the largest gamma considered
  std::string delimiter = "\n";  // ends a step
  int64_t max_step_tokens = 64;  // a step longer than this is cut
  int width = 1;                 // drafted alternatives per step (sampled requests)
  bool async = false;            // draft on a thread of its own while the target works
  int draft_threads = 1;         // async: intra-op threads of the draft's thread
  // async: the draft model's device; on a GPU the draft's thread queues its
  // kernels on a stream of its own, so they overlap the target's.
  c10::Device draft_device = c10::kCPU;
};

struct StepStats {
  int64_t rounds = 0;           // rounds (one target call each)
  int64_t request_rounds = 0;   // requests in flight, summed over rounds
  int64_t drafted_steps = 0;    // drafted steps compared with the target's
  int64_t accepted_steps = 0;   // of those, committed
  int64_t committed_steps = 0;  // drafted and target steps committed
  int64_t gamma_sum = 0;        // the rounds' gammas, summed
  int64_t token_rounds = 0;     // rounds whose token draft length was chosen (adaptive)
  int64_t draft_length_sum = 0;  // those rounds' token draft lengths, summed
  double mean_gamma() const { return rounds ? static_cast<double>(gamma_sum) / static_cast<double>(rounds) : 0; }
  double mean_draft_length() const {
    return token_rounds ? static_cast<double>(draft_length_sum) / static_cast<double>(token_rounds) : 0;
  }
  // Steps a request commits per round it takes part in.
  double steps_per_round() const {
    return request_rounds ? static_cast<double>(committed_steps) / static_cast<double>(request_rounds) : 0;
  }
  double acceptance() const {
    return drafted_steps ? static_cast<double>(accepted_steps) / static_cast<double>(drafted_steps) : 0;
  }
};

class LookaheadEngine : public Engine {
 public:
  // `settings` supplies the tokenizer (required: steps are text) and EOS.
  LookaheadEngine(std::unique_ptr<Engine> draft, std::unique_ptr<Engine> target, RunSettings settings,
                  LookaheadSettings lookahead, std::unique_ptr<StepVerifier> verifier);

  using Engine::generate;
  std::vector<Completion> generate(const std::vector<GenRequest>& requests,
                                   const CompletionCallback& on_complete) override;
  std::string name() const override { return "lookahead(" + target_->name() + ")"; }
  // The target engine's work, with the committed tokens as generated.
  EngineStats stats() const override;
  void reset_stats() override;
  StepStats step_stats() const { return steps_; }
  const LookaheadSettings& settings() const { return lookahead_; }
  const StepVerifier& verifier() const { return *verifier_; }

 private:
  struct Run;

  // Synchronous: one round for every running request: draft, target,
  // verify, commit.
  void round(std::vector<Run>& runs);
  // Asynchronous: until every request has finished; `settle` hands over
  // the finished ones.
  void run_async(std::vector<Run>& runs, const std::function<void()>& settle);
  // The draft requests for the alternatives of the step after `node`
  // (none once the request's budget is spent), marking it as asked for.
  void ask_draft(Run& run, StepTree::Id node, std::vector<GenRequest>& batch,
                 std::vector<std::pair<Run*, StepTree::Id>>& owners);
  // Adds a draft call's answers to their trees (those still there) and marks
  // the nodes asked for as expanded.
  void take_drafts(std::vector<Completion> steps, const std::vector<std::pair<Run*, StepTree::Id>>& owners);
  // The target requests for every node of the run's tree not yet asked for,
  // drafting chains of `draft_length` tokens (0: the target engine's own).
  void ask_target(Run& run, bool to_the_end, int draft_length, std::vector<GenRequest>& batch,
                  std::vector<std::pair<Run*, StepTree::Id>>& owners);
  // Asks the verifier, in one batch over the runs, about every drafted step
  // not yet judged whose parent's target step is in (and, with
  // `wait_for_drafts`, all of the parent's alternatives).
  void judge(const std::vector<Run*>& runs, bool wait_for_drafts);
  // Commits at the root of the run's tree, once it is judged: the first
  // accepted drafted step (its node becomes the root), or else the target's
  // step (the tree starts afresh). False when the root is not judged yet.
  bool commit_root(Run& run, bool wait_for_drafts);
  // This round's gamma (the setting, or the adaptive choice), and whether
  // the target writes each request to its end instead of one step.
  struct RoundPlan {
    int gamma = 0;
    bool to_the_end = false;
  };
  RoundPlan next_round() const;
  // Nodes per request of a full tree `gamma` deep.
  int tree_size(int gamma) const;
  // Asynchronous, adaptive: ceil(target call / draft call) within [1, max_gamma].
  int async_gamma() const;
  // Measured, or estimated, time of a target call with k steps per request.
  double target_call_seconds(int k) const;
  // Adaptive: the token draft length for the next target call; 0 (the
  // target engine's own) otherwise.
  int token_draft_length() const;
  // Counts a target call's draft length (and its gamma) in the stats.
  void count_round(int gamma, int draft_length);
  // Adaptive: adds the target engine's forwards since `before` to
  // forward_cost_ (steady calls only: a first call also prefills).
  void count_forwards(const EngineStats& before);

  static constexpr int kMaxTokenDraft = 16;

  static constexpr int kExploreEvery = 8;

  std::unique_ptr<Engine> draft_;
  std::unique_ptr<Engine> target_;
  RunSettings settings_;
  LookaheadSettings lookahead_;
  std::unique_ptr<StepVerifier> verifier_;
  models::DeviceStream draft_stream_;  // the draft thread's (async)
  StepStats steps_;
  // Wall time of the draft engine's calls (one level of the trees) and of
  // the target engine's calls by steps per request, for the adaptive gamma.
  // A call that reads some request's prompt for the first time also
  // prefills it, so such "cold" calls are measured apart and count only
  // until a steady call of the same engine is measured.
  struct Calls {
    double seconds = 0;
    int64_t count = 0;
    void add(double call_seconds) { seconds += call_seconds, count += 1; }
    double mean() const { return seconds / double(count); }
  };
  Calls draft_calls_, cold_draft_calls_;
  ForwardCost forward_cost_;  // the target engine's forwards, by drafted tokens verified
  std::map<int, Calls> target_calls_, cold_target_calls_;
  const Calls& draft_measured() const { return draft_calls_.count ? draft_calls_ : cold_draft_calls_; }
  const std::map<int, Calls>& target_measured() const {
    return target_calls_.empty() ? cold_target_calls_ : target_calls_;
  }
  int64_t generated_tokens_ = 0;
  int64_t requests_ = 0;
  double wall_s_ = 0;
};

}  // namespace seed::spec
