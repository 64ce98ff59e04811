#include "spec/lookahead_engine.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "models/base/error.h"
#include "spec/request_output.h"

namespace seed::spec {
namespace {

enum class StepRole : uint64_t { kDraft = 1, kTarget = 2 };

// A step request's stream: the request's, the position the step starts at
// and who writes it, so that every step draws its own randomness.
uint64_t step_stream(uint64_t stream, size_t position, StepRole role) {
  uint64_t x = stream * 0x9e3779b97f4a7c15ULL ^ (static_cast<uint64_t>(position) << 2 | static_cast<uint64_t>(role));
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

std::vector<int32_t> joined(const std::vector<Completion>& steps, size_t count) {
  std::vector<int32_t> out;
  for (size_t i = 0; i < count; ++i) out.insert(out.end(), steps[i].tokens.begin(), steps[i].tokens.end());
  return out;
}

}  // namespace

struct LookaheadEngine::Run {
  size_t index = 0;
  const GenRequest* request = nullptr;
  std::vector<int32_t> prompt;
  std::vector<int32_t> committed;
  std::optional<RequestOutput> output;
  std::optional<Completion> completion;  // once settled

  GenRequest step(const std::vector<int32_t>& after, int64_t budget, int64_t max_step_tokens, StepRole role,
                  std::vector<std::string> stop) const {
    GenRequest r;
    r.prompt_tokens = prompt;
    r.prompt_tokens.insert(r.prompt_tokens.end(), committed.begin(), committed.end());
    r.prompt_tokens.insert(r.prompt_tokens.end(), after.begin(), after.end());
    r.max_new_tokens = std::min(budget, max_step_tokens);
    r.stop = std::move(stop);
    r.sampling = request->sampling;
    r.seed = request->seed;
    r.stream = step_stream(request->stream, committed.size() + after.size(), role);
    r.kind = request->kind;
    r.priority = request->priority;
    r.group = request->group;
    return r;
  }
  // Tokens the request may still generate after `pending` more.
  int64_t budget(size_t pending) const { return output->remaining() - static_cast<int64_t>(pending); }
};

LookaheadEngine::LookaheadEngine(std::unique_ptr<Engine> draft, std::unique_ptr<Engine> target, RunSettings settings,
                                 LookaheadSettings lookahead, std::unique_ptr<StepVerifier> verifier)
    : draft_(std::move(draft)),
      target_(std::move(target)),
      settings_(std::move(settings)),
      lookahead_(std::move(lookahead)),
      verifier_(std::move(verifier)) {
  SEED_CHECK(draft_ && target_, kInvalidArgument) << "lookahead: needs a draft engine and a target engine";
  SEED_CHECK(verifier_, kInvalidArgument) << "lookahead: needs a step verifier";
  SEED_CHECK(settings_.tokenizer, kInvalidArgument) << "lookahead: steps are text; the target model folder has no tokenizer";
  SEED_CHECK(lookahead_.gamma >= 0, kInvalidArgument) << "--lookahead: " << lookahead_.gamma << " steps < 0";
  SEED_CHECK(!lookahead_.delimiter.empty(), kInvalidArgument) << "lookahead: empty step delimiter";
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
  while (true) {
    bool any = false;
    for (const Run& run : runs) any = any || !run.output->finished();
    if (!any) break;
    round(runs);
    settle_finished();
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
  const auto known = target_calls_.find(k);
  if (known != target_calls_.end()) return known->second.mean();
  if (target_calls_.size() == 1) return target_calls_.begin()->second.mean();
  // Least squares T(k) = a + b k over the means seen, never below the
  // cheapest seen.
  double n = 0, sk = 0, st = 0, skk = 0, skt = 0, cheapest = std::numeric_limits<double>::max();
  for (const auto& [size, calls] : target_calls_) {
    const double t = calls.mean();
    n += 1, sk += size, st += t, skk += double(size) * size, skt += size * t;
    cheapest = std::min(cheapest, t);
  }
  const double slope = (n * skt - sk * st) / (n * skk - sk * sk);
  return std::max(cheapest, (st - slope * sk) / n + slope * k);
}

LookaheadEngine::RoundPlan LookaheadEngine::next_round() const {
  if (!lookahead_.adaptive || draft_calls_ == 0 || target_calls_.empty()) return {lookahead_.gamma, false};
  // Laplace's estimate keeps one early rejection from ruling drafting out.
  const double alpha = (double(steps_.accepted_steps) + 1) / (double(steps_.drafted_steps) + 2);
  const double draft_step_s = draft_call_s_ / double(draft_calls_);
  int best = 0;
  double best_rate = 0;
  for (int gamma = 0; gamma <= lookahead_.max_gamma; ++gamma) {
    // Steps a round commits on average (the accepted drafted prefix and the
    // target's step after it) over what the round costs.
    const double steps = (1 - std::pow(alpha, gamma + 1)) / (1 - alpha);
    const double rate = steps / (gamma * draft_step_s + target_call_seconds(gamma + 1));
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

void LookaheadEngine::round(std::vector<Run>& runs) {
  const RoundPlan plan = next_round();
  const int gamma = plan.gamma;
  steps_.rounds += 1;
  steps_.gamma_sum += gamma;
  std::vector<Run*> live;
  for (Run& run : runs) {
    if (!run.output->finished()) live.push_back(&run);
  }
  steps_.request_rounds += static_cast<int64_t>(live.size());
  // 1. Up to gamma drafted steps each, one batched draft call per step.
  std::vector<std::vector<Completion>> drafts(live.size());
  std::vector<bool> drafting(live.size(), true);
  for (int j = 0; j < gamma; ++j) {
    std::vector<GenRequest> batch;
    std::vector<size_t> owner;
    for (size_t a = 0; a < live.size(); ++a) {
      if (!drafting[a]) continue;
      const std::vector<int32_t> after = joined(drafts[a], drafts[a].size());
      const int64_t budget = live[a]->budget(after.size());
      if (budget <= 0) {
        drafting[a] = false;
        continue;
      }
      batch.push_back(live[a]->step(after, budget, lookahead_.max_step_tokens, StepRole::kDraft, {lookahead_.delimiter}));
      owner.push_back(a);
    }
    if (batch.empty()) break;
    const Clock::time_point draft_start = Clock::now();
    std::vector<Completion> steps = draft_->generate(batch);
    draft_call_s_ += seconds_since(draft_start);
    draft_calls_ += 1;
    for (size_t b = 0; b < steps.size(); ++b) {
      const size_t a = owner[b];
      // Only a step that ended at the delimiter can be followed by another.
      drafting[a] = steps[b].finish == FinishReason::kStop;
      drafts[a].push_back(std::move(steps[b]));
    }
  }
  // 2. The target's step after each drafted prefix, all in one call.
  std::vector<GenRequest> batch;
  std::vector<std::pair<size_t, size_t>> slot;  // (live index, prefix length in steps)
  for (size_t a = 0; a < live.size(); ++a) {
    for (size_t j = 0; j <= drafts[a].size(); ++j) {
      const std::vector<int32_t> after = joined(drafts[a], j);
      const int64_t budget = live[a]->budget(after.size());
      if (budget <= 0) break;
      // Without drafting, the target writes the rest of the request in one
      // call rather than step by step.
      batch.push_back(plan.to_the_end
                          ? live[a]->step(after, budget, budget, StepRole::kTarget, live[a]->request->stop)
                          : live[a]->step(after, budget, lookahead_.max_step_tokens, StepRole::kTarget,
                                          {lookahead_.delimiter}));
      slot.push_back({a, j});
    }
  }
  std::vector<std::vector<Completion>> targets(live.size());
  if (!batch.empty()) {
    const Clock::time_point target_start = Clock::now();
    std::vector<Completion> steps = target_->generate(batch);
    if (!plan.to_the_end) {
      Calls& calls = target_calls_[gamma + 1];
      calls.seconds += seconds_since(target_start);
      calls.count += 1;
    }
    for (size_t b = 0; b < steps.size(); ++b) targets[slot[b].first].push_back(std::move(steps[b]));
  }
  // 3. Verify and commit: accepted drafted steps, then one target step.
  for (size_t a = 0; a < live.size(); ++a) {
    Run& run = *live[a];
    const auto commit = [&](const Completion& step) {
      steps_.committed_steps += 1;
      for (const int32_t token : step.tokens) {
        run.committed.push_back(token);
        if (run.output->push(token)) return;
      }
      if (step.finish == FinishReason::kEos) {
        run.output->end(FinishReason::kEos);
      } else if (step.finish == FinishReason::kContext || step.finish == FinishReason::kError ||
                 step.finish == FinishReason::kCancelled) {
        run.output->end(step.finish, step.error);
      }
    };
    for (size_t j = 0; j < targets[a].size() && !run.output->finished(); ++j) {
      const Completion& target = targets[a][j];
      if (j < drafts[a].size()) {
        const Completion& draft = drafts[a][j];
        steps_.drafted_steps += 1;
        const bool accepted = draft.finish == FinishReason::kStop && target.finish == FinishReason::kStop &&
                              verifier_->same(target.text, draft.text);
        if (accepted) {
          steps_.accepted_steps += 1;
          commit(draft);
          continue;
        }
      }
      commit(target);
      break;
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
  return s;
}

void LookaheadEngine::reset_stats() {
  draft_->reset_stats();
  target_->reset_stats();
  steps_ = {};
  draft_call_s_ = 0;
  draft_calls_ = 0;
  target_calls_.clear();
  generated_tokens_ = 0;
  requests_ = 0;
  wall_s_ = 0;
}

}  // namespace seed::spec
