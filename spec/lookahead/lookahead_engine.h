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
// Adaptive (LookaheadSettings::adaptive): gamma and the target engine's
// token draft length are chosen each round from what was measured
// (lookahead_planner.h).
//
// make_engine builds it where EngineOptions::lookahead asks for it
// (spec/engine/engine_factory.h); stats() reports its steps in
// EngineStats::steps.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "models/device_stream.h"
#include "spec/api/engine.h"
#include "spec/engine/request_run.h"
#include "spec/lookahead/lookahead_planner.h"
#include "spec/lookahead/lookahead_settings.h"
#include "spec/lookahead/step_run.h"
#include "spec/lookahead/step_verifier.h"

namespace seed::spec {

class LookaheadEngine : public Engine {
 public:
  // `settings` supplies the tokenizer (required: steps are text) and EOS.
  LookaheadEngine(std::unique_ptr<Engine> draft, std::unique_ptr<Engine> target, RunSettings settings,
                  LookaheadSettings lookahead, std::unique_ptr<StepVerifier> verifier);

  using Engine::generate;
  std::vector<Completion> generate(const std::vector<GenRequest>& requests,
                                   const CompletionCallback& on_complete) override;
  std::string name() const override { return "lookahead(" + target_->name() + ")"; }
  // The target engine's work, with the committed tokens as generated and
  // the steps (EngineStats::steps).
  EngineStats stats() const override;
  void reset_stats() override;
  // The target engine's: it drafts the tokens of each step.
  DraftPlan draft_plan() const override { return target_->draft_plan(); }
  // Both engines' drafters drop the group's tables.
  void end_group(uint64_t group) noexcept override {
    draft_->end_group(group);
    target_->end_group(group);
  }

 private:
  // Synchronous: one round for every running request: draft, target,
  // verify, commit.
  void round(std::vector<StepRun>& runs);
  // Asynchronous: until every request has finished; `settle` hands over
  // the finished ones (lookahead_async.cpp).
  void run_async(std::vector<StepRun>& runs, const std::function<void()>& settle);
  // The draft requests for the alternatives of the step after `node`
  // (none once the request's budget is spent), marking it as asked for.
  void ask_draft(StepRun& run, StepTree::Id node, std::vector<GenRequest>& batch, StepOwners& owners);
  // Adds a draft call's answers to their trees (those still there) and marks
  // the nodes asked for as expanded.
  void take_drafts(std::vector<Completion> steps, const StepOwners& owners);
  // The target requests for every node of the run's tree not yet asked for,
  // drafting chains of `draft_length` tokens (0: the target engine's own).
  void ask_target(StepRun& run, bool to_the_end, int draft_length, std::vector<GenRequest>& batch,
                  StepOwners& owners);
  // Asks the verifier, in one batch over the runs, about every drafted step
  // not yet judged whose parent's target step is in (and, with
  // `wait_for_drafts`, all of the parent's alternatives).
  void judge(const std::vector<StepRun*>& runs, bool wait_for_drafts);
  // Commits at the root of the run's tree, once it is judged: the first
  // accepted drafted step (its node becomes the root), or else the target's
  // step (the tree starts afresh). False when the root is not judged yet.
  bool commit_root(StepRun& run, bool wait_for_drafts);
  // Counts a target call's gamma and token draft length in the stats.
  void count_round(int gamma, int draft_length);
  // Adaptive: the target engine's stats before a call, for add_forwards.
  EngineStats forwards_before() const;
  // Adaptive, a steady call: its forwards since `before`, to the planner.
  void count_forwards(const EngineStats& before, bool steady);

  std::unique_ptr<Engine> draft_;
  std::unique_ptr<Engine> target_;
  RunSettings settings_;
  LookaheadSettings lookahead_;
  std::unique_ptr<StepVerifier> verifier_;
  models::DeviceStream draft_stream_;  // the draft thread's (async)
  StepStats steps_;
  LookaheadPlanner planner_;
  int64_t generated_tokens_ = 0;
  int64_t requests_ = 0;
  double wall_s_ = 0;
};

}  // namespace seed::spec
