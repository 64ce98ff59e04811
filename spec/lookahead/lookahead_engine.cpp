#include "spec/lookahead/lookahead_engine.h"

#include <algorithm>

#include "models/base/error.h"

namespace seed::spec {

LookaheadEngine::LookaheadEngine(std::unique_ptr<Engine> draft, std::unique_ptr<Engine> target, RunSettings settings,
                                 LookaheadSettings lookahead, std::unique_ptr<StepVerifier> verifier)
    : draft_(std::move(draft)),
      target_(std::move(target)),
      settings_(std::move(settings)),
      lookahead_(std::move(lookahead)),
      verifier_(std::move(verifier)),
      draft_stream_(c10::Device(lookahead_.draft_device)),
      planner_(lookahead_) {
  SEED_CHECK(draft_ && target_, kInvalidArgument) << "lookahead: needs a draft engine and a target engine";
  SEED_CHECK(verifier_, kInvalidArgument) << "lookahead: needs a step verifier";
  SEED_CHECK(settings_.tokenizer, kInvalidArgument) << "lookahead: steps are text; the target model folder has no tokenizer";
  SEED_CHECK(lookahead_.gamma >= 0, kInvalidArgument) << "--lookahead: " << lookahead_.gamma << " steps < 0";
  SEED_CHECK(!lookahead_.delimiter.empty(), kInvalidArgument) << "lookahead: empty step delimiter";
  SEED_CHECK(lookahead_.width >= 1, kInvalidArgument) << "lookahead: width " << lookahead_.width << " < 1";
  SEED_CHECK(!lookahead_.async || lookahead_.gamma >= 1, kInvalidArgument)
      << "lookahead: the asynchronous mode drafts at least one step ahead, not " << lookahead_.gamma;
  SEED_CHECK(lookahead_.max_step_tokens >= 1, kInvalidArgument)
      << "lookahead: max_step_tokens " << lookahead_.max_step_tokens << " < 1";
}

std::vector<Completion> LookaheadEngine::generate(const std::vector<GenRequest>& requests,
                                                  const CompletionCallback& on_complete) {
  const Clock::time_point start = Clock::now();
  std::vector<StepRun> runs(requests.size());
  for (size_t i = 0; i < requests.size(); ++i) {
    const GenRequest& r = requests[i];
    SEED_CHECK(r.max_new_tokens >= 0, kInvalidArgument)
        << "request " << i << ": max_new_tokens is " << r.max_new_tokens << ", expected >= 0";
    SEED_CHECK(!r.prompt.empty() || !r.prompt_tokens.empty(), kInvalidArgument)
        << "request " << i << ": prompt and prompt_tokens are both empty";
    StepRun& run = runs[i];
    run.index = i;
    run.request = &r;
    run.prompt = r.prompt_tokens.empty() ? encode_prompt(settings_, r.prompt) : r.prompt_tokens;
    run.output.emplace(settings_.tokenizer.get(), settings_.stop_tokens, r.max_new_tokens, r.stop);
    if (r.max_new_tokens == 0) run.output->end(FinishReason::kLength);
  }
  const auto settle_finished = [&] {
    for (StepRun& run : runs) {
      if (run.completion || !run.output->finished()) continue;
      run.completion = run.output->take();
      run.completion->stats.prompt_tokens = static_cast<int64_t>(run.prompt.size());
      run.completion->stats.generated_tokens = static_cast<int64_t>(run.completion->tokens.size());
      run.completion->stats.wall_s = seconds_since(start);
      if (!on_complete) continue;
      for (const size_t other : on_complete(run.index, *run.completion)) {
        SEED_CHECK(other < runs.size(), kInvalidArgument)
            << "on_complete cancelled request " << other << " of a batch of " << runs.size();
        runs[other].output->end(FinishReason::kCancelled);
      }
    }
  };
  settle_finished();
  if (lookahead_.async) {
    run_async(runs, settle_finished);
  } else {
    while (std::any_of(runs.begin(), runs.end(), [](const StepRun& run) { return run.running(); })) {
      round(runs);
      settle_finished();
    }
  }
  std::vector<Completion> out;
  for (StepRun& run : runs) {
    generated_tokens_ += run.completion->stats.generated_tokens;
    out.push_back(std::move(*run.completion));
  }
  requests_ += static_cast<int64_t>(requests.size());
  wall_s_ += seconds_since(start);
  return out;
}

void LookaheadEngine::count_round(int gamma, int draft_length) {
  steps_.rounds += 1;
  steps_.gamma_sum += gamma;
  if (draft_length > 0) {
    steps_.token_rounds += 1;
    steps_.draft_length_sum += draft_length;
  }
}

EngineStats LookaheadEngine::forwards_before() const { return lookahead_.adaptive ? target_->stats() : EngineStats{}; }

void LookaheadEngine::count_forwards(const EngineStats& before, bool steady) {
  if (lookahead_.adaptive && steady) planner_.add_forwards(before, target_->stats());
}

void LookaheadEngine::ask_draft(StepRun& run, StepTree::Id node, std::vector<GenRequest>& batch, StepOwners& owners) {
  StepTree& tree = *run.tree;
  const std::vector<int32_t>& path = tree.path(node);
  if (run.budget(path) <= 0) {
    tree.mark_expanded(node);
    return;
  }
  tree.mark_expanding(node);
  const int alternatives = run.request->sampling.greedy() ? 1 : lookahead_.width;
  for (int a = 0; a < alternatives; ++a) {
    batch.push_back(run.step(path, lookahead_.max_step_tokens, StepRole::kDraft, {lookahead_.delimiter}, a));
    // The first alternative is the draft's greedy step. Whatever the draft
    // proposes, a committed step means what the target's own sampled step
    // means (the verifier's test), so the proposal only sets how often a
    // step is accepted: for one proposal, the likeliest step is the best bet.
    if (a == 0) batch.back().sampling.temperature = 0.0f;
    owners.push_back({&run, node});
  }
}

void LookaheadEngine::take_drafts(std::vector<Completion> steps, const StepOwners& owners) {
  for (size_t b = 0; b < steps.size(); ++b) {
    StepTree& tree = *owners[b].first->tree;
    if (tree.contains(owners[b].second)) tree.add_child(owners[b].second, std::move(steps[b]));
  }
  for (const auto& [run, node] : owners) {
    if (run->tree->contains(node)) run->tree->mark_expanded(node);
  }
}

void LookaheadEngine::ask_target(StepRun& run, bool to_the_end, int draft_length, std::vector<GenRequest>& batch,
                                 StepOwners& owners) {
  StepTree& tree = *run.tree;
  for (const StepTree::Id node : tree.to_verify()) {
    tree.mark_verifying(node);
    const std::vector<int32_t>& path = tree.path(node);
    const int64_t budget = run.budget(path);
    if (budget <= 0) continue;  // committing the drafts up to here ends the request
    // Without drafting, the target writes the rest of the request in one
    // call rather than step by step.
    batch.push_back(to_the_end ? run.step(path, budget, StepRole::kTarget, run.request->stop)
                               : run.step(path, lookahead_.max_step_tokens, StepRole::kTarget, {lookahead_.delimiter}));
    batch.back().draft_length = draft_length;
    owners.push_back({&run, node});
  }
}

void LookaheadEngine::judge(const std::vector<StepRun*>& runs, bool wait_for_drafts) {
  std::vector<StepPair> pairs;
  std::vector<std::pair<StepTree*, StepTree::Id>> asked;
  for (StepRun* run : runs) {
    if (!run->running()) continue;
    StepTree& tree = *run->tree;
    std::vector<StepTree::Id> nodes = {tree.root()};
    while (!nodes.empty()) {
      const StepTree::Id node = nodes.back();
      nodes.pop_back();
      const std::vector<StepTree::Id>& children = tree.children(node);
      nodes.insert(nodes.end(), children.begin(), children.end());
      if (!tree.target(node) || (wait_for_drafts && !tree.expanded(node))) continue;
      const Completion& target = *tree.target(node);
      for (const StepTree::Id child : children) {
        if (tree.verdict(child)) continue;
        // A step cut short (no delimiter) on either side is never accepted.
        if (target.finish != FinishReason::kStop || tree.draft(child).finish != FinishReason::kStop) {
          tree.set_verdict(child, false);
          continue;
        }
        pairs.push_back({target.text, tree.draft(child).text});
        asked.push_back({&tree, child});
      }
    }
  }
  if (pairs.empty()) return;
  const std::vector<bool> verdicts = verifier_->same_all(pairs);
  for (size_t i = 0; i < asked.size(); ++i) asked[i].first->set_verdict(asked[i].second, verdicts[i]);
}

bool LookaheadEngine::commit_root(StepRun& run, bool wait_for_drafts) {
  StepTree& tree = *run.tree;
  const StepTree::Id root = tree.root();
  if (!tree.target(root) || (wait_for_drafts && !tree.expanded(root))) return false;
  const std::vector<StepTree::Id>& children = tree.children(root);
  if (std::any_of(children.begin(), children.end(), [&](StepTree::Id c) { return !tree.verdict(c); })) return false;
  if (!children.empty()) steps_.drafted_steps += 1;
  steps_.committed_steps += 1;
  for (const StepTree::Id child : children) {
    if (!*tree.verdict(child)) continue;
    steps_.accepted_steps += 1;
    if (run.commit(tree.draft(child))) tree.advance_to(child);
    return true;
  }
  if (run.commit(*tree.target(root))) tree.restart(run.committed);
  return true;
}

void LookaheadEngine::round(std::vector<StepRun>& runs) {
  const LookaheadPlanner::RoundPlan plan = planner_.next_round(steps_);
  std::vector<StepRun*> live;
  for (StepRun& run : runs) {
    if (!run.running()) continue;
    live.push_back(&run);
    run.tree.emplace(run.committed);
  }
  steps_.request_rounds += static_cast<int64_t>(live.size());
  // 1. The trees, level by level: one batched draft call per level.
  for (int depth = 0; depth < plan.gamma; ++depth) {
    std::vector<GenRequest> batch;
    StepOwners owners;
    for (StepRun* run : live) {
      for (const StepTree::Id node : run->tree->to_expand(depth + 1)) ask_draft(*run, node, batch, owners);
    }
    if (batch.empty()) break;
    const Clock::time_point draft_start = Clock::now();
    std::vector<Completion> steps = draft_->generate(batch);
    planner_.add_draft_call(seconds_since(draft_start), steady_call(owners, &StepRun::drafted));
    take_drafts(std::move(steps), owners);
  }
  // 2. The target's step after every node, all in one call.
  std::vector<GenRequest> batch;
  StepOwners owners;
  const int draft_length = planner_.token_draft_length(target_->stats());
  count_round(plan.gamma, draft_length);
  for (StepRun* run : live) ask_target(*run, plan.to_the_end, draft_length, batch, owners);
  if (!batch.empty()) {
    const Clock::time_point target_start = Clock::now();
    const EngineStats before = forwards_before();
    std::vector<Completion> steps = target_->generate(batch);
    const double seconds = seconds_since(target_start);
    const bool steady = steady_call(owners, &StepRun::targeted);
    count_forwards(before, steady);
    if (!plan.to_the_end) planner_.add_target_call(static_cast<int>(batch.size() / live.size()), seconds, steady);
    for (size_t b = 0; b < steps.size(); ++b) owners[b].first->tree->set_target(owners[b].second, std::move(steps[b]));
  }
  // 3. Verify and commit, from the root down.
  judge(live, false);
  for (StepRun* run : live) {
    while (run->running() && commit_root(*run, false)) {
    }
  }
}

EngineStats LookaheadEngine::stats() const {
  EngineStats s = target_->stats();
  const EngineStats d = draft_->stats();
  s.requests = requests_;
  s.generated_tokens = generated_tokens_;
  s.wall_s = wall_s_;
  s.draft_s += d.wall_s;
  s.steps = steps_;
  return s;
}

void LookaheadEngine::reset_stats() {
  draft_->reset_stats();
  target_->reset_stats();
  steps_ = {};
  planner_ = LookaheadPlanner(lookahead_);
  generated_tokens_ = 0;
  requests_ = 0;
  wall_s_ = 0;
}

}  // namespace seed::spec
