#include "spec/lookahead/lookahead_engine.h"

#include <ATen/Parallel.h>
#include <cstdint>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <exception>
#include <limits>
#include <mutex>
#include <optional>
#include <thread>

#include "models/base/error.h"
#include "spec/lookahead/line_fit.h"
#include "spec/lookahead/lookahead_theory.h"
#include "spec/engine/request_output.h"

namespace seed::spec {
namespace {

enum class StepRole : uint64_t { kDraft = 1, kTarget = 2 };

// A step request's stream: the request's, the position the step starts at,
// who writes it and which alternative it is, so that every step draws its
// own randomness.
uint64_t step_stream(uint64_t stream, size_t position, StepRole role, int alternative) {
  uint64_t x = stream * 0x9e3779b97f4a7c15ULL ^ (static_cast<uint64_t>(position) << 2 | static_cast<uint64_t>(role));
  x ^= static_cast<uint64_t>(alternative) * 0xd6e8feb86659fd93ULL;
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Whether every owner's run has been read by a call of the kind `seen`
// marks, marking them all as read by this one.
template <typename Owners, typename Seen>
bool steady_call(const Owners& owners, Seen seen) {
  bool steady = true;
  for (const auto& owner : owners) {
    steady = steady && seen(*owner.first);
  }
  for (const auto& owner : owners) seen(*owner.first) = true;
  return steady;
}

}  // namespace

struct LookaheadEngine::Run {
  size_t index = 0;
  const GenRequest* request = nullptr;
  std::vector<int32_t> prompt;
  std::vector<int32_t> committed;
  std::optional<RequestOutput> output;
  std::optional<Completion> completion;  // once settled
  std::optional<StepTree> tree;          // while running
  // Whether a draft call and a target call have read the prompt. A call
  // that reads a prompt first also prefills it, so its time says little of
  // a step's and is left out of the adaptive lookahead's measurements.
  bool drafted = false;
  bool targeted = false;

  // The step after the generated tokens `path` (committed ones first).
  GenRequest step(const std::vector<int32_t>& path, int64_t max_step_tokens, StepRole role,
                  std::vector<std::string> stop, int alternative = 0) const {
    GenRequest r;
    r.prompt_tokens = prompt;
    r.prompt_tokens.insert(r.prompt_tokens.end(), path.begin(), path.end());
    r.max_new_tokens = std::min(budget(path), max_step_tokens);
    r.stop = std::move(stop);
    r.sampling = request->sampling;
    r.seed = request->seed;
    r.stream = step_stream(request->stream, path.size(), role, alternative);
    r.kind = request->kind;
    r.priority = request->priority;
    r.group = request->group;
    return r;
  }
  // Tokens the request may still generate after those of `path`.
  int64_t budget(const std::vector<int32_t>& path) const {
    return output->remaining() - static_cast<int64_t>(path.size() - committed.size());
  }
  bool running() const { return !output->finished(); }
  // Appends a committed step; false once the request has finished.
  bool commit(const Completion& step) {
    for (const int32_t token : step.tokens) {
      committed.push_back(token);
      if (output->push(token)) return false;
    }
    if (step.finish == FinishReason::kEos) {
      output->end(FinishReason::kEos);
    } else if (step.finish == FinishReason::kContext || step.finish == FinishReason::kError ||
               step.finish == FinishReason::kCancelled) {
      output->end(step.finish, step.error);
    }
    return running();
  }
};

LookaheadEngine::LookaheadEngine(std::unique_ptr<Engine> draft, std::unique_ptr<Engine> target, RunSettings settings,
                                 LookaheadSettings lookahead, std::unique_ptr<StepVerifier> verifier)
    : draft_(std::move(draft)),
      target_(std::move(target)),
      settings_(std::move(settings)),
      lookahead_(std::move(lookahead)),
      verifier_(std::move(verifier)),
      draft_stream_(lookahead_.draft_device) {
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
  std::vector<Run> runs(requests.size());
  for (size_t i = 0; i < requests.size(); ++i) {
    const GenRequest& r = requests[i];
    SEED_CHECK(r.max_new_tokens >= 0, kInvalidArgument)
        << "request " << i << ": max_new_tokens is " << r.max_new_tokens << ", expected >= 0";
    SEED_CHECK(!r.prompt.empty() || !r.prompt_tokens.empty(), kInvalidArgument)
        << "request " << i << ": prompt and prompt_tokens are both empty";
    Run& run = runs[i];
    run.index = i;
    run.request = &r;
    run.prompt = r.prompt_tokens.empty() ? encode_prompt(settings_, r.prompt) : r.prompt_tokens;
    run.output.emplace(settings_.tokenizer.get(), settings_.stop_tokens, r.max_new_tokens, r.stop);
    if (r.max_new_tokens == 0) run.output->end(FinishReason::kLength);
  }
  const auto settle_finished = [&] {
    for (Run& run : runs) {
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
    while (std::any_of(runs.begin(), runs.end(), [](const Run& run) { return run.running(); })) {
      round(runs);
      settle_finished();
    }
  }
  std::vector<Completion> out;
  for (Run& run : runs) {
    generated_tokens_ += run.completion->stats.generated_tokens;
    out.push_back(std::move(*run.completion));
  }
  requests_ += static_cast<int64_t>(requests.size());
  wall_s_ += seconds_since(start);
  return out;
}

double LookaheadEngine::target_call_seconds(int k) const {
  const std::map<int, Calls>& measured = target_measured();
  const auto known = measured.find(k);
  if (known != measured.end()) return known->second.mean();
  if (measured.size() == 1) return measured.begin()->second.mean();
  // Least squares T(k) = a + b k over the means seen, never below the
  // cheapest seen.
  LineFit fit;
  double cheapest = std::numeric_limits<double>::max();
  for (const auto& [size, calls] : measured) {
    fit.add(size, calls.mean());
    cheapest = std::min(cheapest, calls.mean());
  }
  return std::max(cheapest, fit.mean_y() + fit.slope() * (k - fit.mean_x()));
}

int LookaheadEngine::tree_size(int gamma) const {
  int nodes = 1, level = 1;
  for (int depth = 1; depth <= gamma; ++depth) nodes += level *= lookahead_.width;
  return nodes;
}

LookaheadEngine::RoundPlan LookaheadEngine::next_round() const {
  if (!lookahead_.adaptive || draft_measured().count == 0 || target_measured().empty()) {
    return {lookahead_.gamma, false};
  }
  // Laplace's estimate keeps one early rejection from ruling drafting out.
  const double alpha = (double(steps_.accepted_steps) + 1) / (double(steps_.drafted_steps) + 2);
  const double draft_call_s = draft_measured().mean();
  int best = 0;
  double best_rate = 0;
  for (int gamma = 0; gamma <= lookahead_.max_gamma; ++gamma) {
    // Steps a round commits on average (the accepted drafted prefix and the
    // target's step after it) over what the round costs.
    const double steps = (1 - std::pow(alpha, gamma + 1)) / (1 - alpha);
    const double rate = steps / (gamma * draft_call_s + target_call_seconds(tree_size(gamma)));
    if (rate > best_rate) best = gamma, best_rate = rate;
  }
  // Every kExploreEvery rounds, a neighbour of the best (one more drafted
  // step, then one fewer): its cost and the acceptance stay measured.
  const int64_t round = steps_.rounds;
  if (round % kExploreEvery == kExploreEvery - 1) {
    return {(round / kExploreEvery) % 2 == 0 ? std::min(best + 1, lookahead_.max_gamma) : std::max(best - 1, 0), false};
  }
  return {best, best == 0};
}

int LookaheadEngine::token_draft_length() const {
  if (!lookahead_.adaptive) return 0;
  const EngineStats target = target_->stats();
  if (target.drafted_tokens == 0 || target.target_forwards == 0 || target.draft_s <= 0 || target.target_busy_s <= 0) {
    return 0;
  }
  // Laplace's estimate, as for steps; the cost of a drafted token (its
  // draft step and its share of the forward that verifies it) over a
  // forward that verifies nothing.
  const double alpha =
      (double(target.accepted_tokens) + 1) / (double(target.accepted_tokens + target.rejections) + 2);
  const double forward_s = forward_cost_.empty() ? target.target_busy_s / double(target.target_forwards)
                                                 : forward_cost_.base_s();
  const double cost = (target.draft_s / double(target.drafted_tokens) + forward_cost_.per_token_s()) / forward_s;
  // A drafted token measured as dear as a target forward (a slow draft, or
  // a busy machine): no draft length pays, so the shortest.
  if (cost >= 1) return 1;
  int best = 2;
  for (int k = 3; k <= kMaxTokenDraft + 1; ++k) {
    if (token_speedup(k, alpha, cost) > token_speedup(best, alpha, cost)) best = k;
  }
  return best - 1;
}

void LookaheadEngine::count_forwards(const EngineStats& before) {
  if (!lookahead_.adaptive) return;
  const EngineStats after = target_->stats();
  forward_cost_.add(after.target_forwards - before.target_forwards, after.drafted_tokens - before.drafted_tokens,
                    after.target_busy_s - before.target_busy_s);
}

void LookaheadEngine::count_round(int gamma, int draft_length) {
  steps_.rounds += 1;
  steps_.gamma_sum += gamma;
  if (draft_length > 0) {
    steps_.token_rounds += 1;
    steps_.draft_length_sum += draft_length;
  }
}

int LookaheadEngine::async_gamma() const {
  if (!lookahead_.adaptive || draft_measured().count == 0 || target_measured().empty()) return lookahead_.gamma;
  Calls target;
  for (const auto& [size, calls] : target_measured()) target.seconds += calls.seconds, target.count += calls.count;
  const double ratio = target.mean() / draft_measured().mean();
  return std::clamp(static_cast<int>(std::ceil(ratio)), 1, lookahead_.max_gamma);
}

void LookaheadEngine::ask_draft(Run& run, StepTree::Id node, std::vector<GenRequest>& batch,
                                std::vector<std::pair<Run*, StepTree::Id>>& owners) {
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

void LookaheadEngine::take_drafts(std::vector<Completion> steps,
                                  const std::vector<std::pair<Run*, StepTree::Id>>& owners) {
  for (size_t b = 0; b < steps.size(); ++b) {
    StepTree& tree = *owners[b].first->tree;
    if (tree.contains(owners[b].second)) tree.add_child(owners[b].second, std::move(steps[b]));
  }
  for (const auto& [run, node] : owners) {
    if (run->tree->contains(node)) run->tree->mark_expanded(node);
  }
}

void LookaheadEngine::ask_target(Run& run, bool to_the_end, int draft_length, std::vector<GenRequest>& batch,
                                 std::vector<std::pair<Run*, StepTree::Id>>& owners) {
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

void LookaheadEngine::judge(const std::vector<Run*>& runs, bool wait_for_drafts) {
  std::vector<StepPair> pairs;
  std::vector<std::pair<StepTree*, StepTree::Id>> asked;
  for (Run* run : runs) {
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

bool LookaheadEngine::commit_root(Run& run, bool wait_for_drafts) {
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

void LookaheadEngine::round(std::vector<Run>& runs) {
  const RoundPlan plan = next_round();
  const int gamma = plan.gamma;
  std::vector<Run*> live;
  for (Run& run : runs) {
    if (!run.running()) continue;
    live.push_back(&run);
    run.tree.emplace(run.committed);
  }
  steps_.request_rounds += static_cast<int64_t>(live.size());
  // 1. The trees, level by level: one batched draft call per level.
  for (int depth = 0; depth < gamma; ++depth) {
    std::vector<GenRequest> batch;
    std::vector<std::pair<Run*, StepTree::Id>> owners;
    for (Run* run : live) {
      for (const StepTree::Id node : run->tree->to_expand(depth + 1)) ask_draft(*run, node, batch, owners);
    }
    if (batch.empty()) break;
    const Clock::time_point draft_start = Clock::now();
    std::vector<Completion> steps = draft_->generate(batch);
    const bool steady = steady_call(owners, [](Run& run) -> bool& { return run.drafted; });
    (steady ? draft_calls_ : cold_draft_calls_).add(seconds_since(draft_start));
    take_drafts(std::move(steps), owners);
  }
  // 2. The target's step after every node, all in one call.
  std::vector<GenRequest> batch;
  std::vector<std::pair<Run*, StepTree::Id>> owners;
  const int draft_length = token_draft_length();
  count_round(gamma, draft_length);
  for (Run* run : live) ask_target(*run, plan.to_the_end, draft_length, batch, owners);
  if (!batch.empty()) {
    const Clock::time_point target_start = Clock::now();
    const EngineStats before = lookahead_.adaptive ? target_->stats() : EngineStats{};
    std::vector<Completion> steps = target_->generate(batch);
    const double seconds = seconds_since(target_start);
    const bool steady = steady_call(owners, [](Run& run) -> bool& { return run.targeted; });
    if (steady) count_forwards(before);
    if (!plan.to_the_end) {
      (steady ? target_calls_ : cold_target_calls_)[static_cast<int>(batch.size() / live.size())].add(seconds);
    }
    for (size_t b = 0; b < steps.size(); ++b) owners[b].first->tree->set_target(owners[b].second, std::move(steps[b]));
  }
  // 3. Verify and commit, from the root down.
  judge(live, false);
  for (Run* run : live) {
    while (run->running() && commit_root(*run, false)) {
    }
  }
}

void LookaheadEngine::run_async(std::vector<Run>& runs, const std::function<void()>& settle) {
  for (Run& run : runs) {
    if (run.running()) run.tree.emplace(run.committed);
  }
  // Everything below is shared between this thread (the target's) and the
  // draft's; the engines are called without the lock.
  std::mutex mutex;
  std::condition_variable changed;
  bool done = false;
  std::exception_ptr draft_error;
  int gamma = lookahead_.gamma;
  std::thread drafter([&] {
    at::internal::lazy_init_num_threads();
    omp_set_num_threads(lookahead_.draft_threads);
    const models::DeviceStream::Scope on_stream(draft_stream_);
    std::unique_lock lock(mutex);
    try {
      while (!done) {
        std::vector<GenRequest> batch;
        std::vector<std::pair<Run*, StepTree::Id>> owners;
        for (Run& run : runs) {
          if (!run.running()) continue;
          for (const StepTree::Id node : run.tree->to_expand(gamma)) ask_draft(run, node, batch, owners);
        }
        if (batch.empty()) {
          changed.notify_all();  // a root may have been marked expanded
          changed.wait(lock);
          continue;
        }
        lock.unlock();
        const Clock::time_point draft_start = Clock::now();
        std::vector<Completion> steps = draft_->generate(batch);
        const double seconds = seconds_since(draft_start);
        lock.lock();
        const bool steady = steady_call(owners, [](Run& run) -> bool& { return run.drafted; });
        (steady ? draft_calls_ : cold_draft_calls_).add(seconds);
        take_drafts(std::move(steps), owners);
        changed.notify_all();
      }
    } catch (...) {
      if (!lock.owns_lock()) lock.lock();
      draft_error = std::current_exception();
      changed.notify_all();
    }
  });
  // However this thread leaves (a finished run, or an error), the draft's
  // thread stops after its current call.
  struct Stop {
    std::mutex& mutex;
    std::condition_variable& changed;
    bool& done;
    std::thread& drafter;
    ~Stop() {
      {
        std::lock_guard lock(mutex);
        done = true;
      }
      changed.notify_all();
      drafter.join();
    }
  } stop{mutex, changed, done, drafter};
  std::unique_lock lock(mutex);
  while (true) {
    if (draft_error) std::rethrow_exception(draft_error);
    std::vector<Run*> running;
    for (Run& run : runs) {
      if (run.running()) running.push_back(&run);
    }
    judge(running, true);
    bool judged = false;
    for (Run* run : running) {
      while (run->running() && commit_root(*run, true)) judged = true;
    }
    settle();
    if (std::none_of(runs.begin(), runs.end(), [](const Run& run) { return run.running(); })) break;
    if (judged) changed.notify_all();
    std::vector<GenRequest> batch;
    std::vector<std::pair<Run*, StepTree::Id>> owners;
    const int draft_length = token_draft_length();
    for (Run& run : runs) {
      if (run.running()) ask_target(run, false, draft_length, batch, owners);
    }
    if (batch.empty()) {
      changed.wait(lock);
      continue;
    }
    int64_t requests = 0;
    for (size_t b = 0; b < owners.size(); ++b) requests += b == 0 || owners[b].first != owners[b - 1].first;
    count_round(gamma, draft_length);
    steps_.request_rounds += requests;
    lock.unlock();
    const Clock::time_point target_start = Clock::now();
    const EngineStats before = lookahead_.adaptive ? target_->stats() : EngineStats{};
    std::vector<Completion> steps = target_->generate(batch);
    const double seconds = seconds_since(target_start);
    lock.lock();
    const bool steady = steady_call(owners, [](Run& run) -> bool& { return run.targeted; });
    if (steady) count_forwards(before);
    (steady ? target_calls_ : cold_target_calls_)[static_cast<int>(batch.size() / static_cast<size_t>(requests))].add(
        seconds);
    for (size_t b = 0; b < steps.size(); ++b) {
      StepTree& tree = *owners[b].first->tree;
      if (tree.contains(owners[b].second)) tree.set_target(owners[b].second, std::move(steps[b]));
    }
    gamma = async_gamma();
    changed.notify_all();  // a deeper lookahead has more to draft
  }
}

EngineStats LookaheadEngine::stats() const {
  EngineStats s = target_->stats();
  const EngineStats d = draft_->stats();
  s.requests = requests_;
  s.generated_tokens = generated_tokens_;
  s.wall_s = wall_s_;
  s.draft_s += d.wall_s;
  return s;
}

void LookaheadEngine::reset_stats() {
  draft_->reset_stats();
  target_->reset_stats();
  steps_ = {};
  draft_calls_ = cold_draft_calls_ = {};
  target_calls_.clear();
  cold_target_calls_.clear();
  forward_cost_ = {};
  generated_tokens_ = 0;
  requests_ = 0;
  wall_s_ = 0;
}

}  // namespace seed::spec
