#include "spec/engine/scheduled_engine.h"

#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <limits>

#include "models/base/error.h"
#include "spec/engine/team_threads.h"

namespace seed::spec {
namespace {

// What a sequence's blocks hold beyond its tokens: its partly filled last
// block and a copy-on-write copy of a shared one (blocks of 16 tokens, the
// caches' default).
constexpr int64_t kKvBlockSlack = 2 * 16;

// A chain drafted by live drafters, whose requests' lengths may vary.
std::optional<DraftLengthPolicy> draft_length_policy(const RunSettings& settings,
                                                     const std::vector<std::unique_ptr<Drafter>>& drafters,
                                                     const LoopSettings& loop) {
  const std::vector<int>& k = settings.k_config;
  const bool chain = !k.empty() && !settings.pruned_tree && std::all_of(k.begin(), k.end(), [](int n) { return n == 1; });
  if (!settings.adaptive_draft_length || !chain || drafters.empty()) return std::nullopt;
  if (!loop.threaded) return DraftLengthPolicy(static_cast<int>(k.size()), 1);
  // Rounds without drafts run on the cores of drafter threads drafting
  // here too (TeamThreads).
  const auto here = std::count_if(drafters.begin(), drafters.end(), [](const auto& d) { return d->drafts_here(); });
  const double target_threads = omp_get_max_threads();
  const double drafter_threads = static_cast<double>(here) * loop.draft_threads;
  return DraftLengthPolicy(static_cast<int>(k.size()), static_cast<int>(drafters.size()),
                           target_threads / (target_threads + drafter_threads));
}

}  // namespace

ScheduledEngine::ScheduledEngine(std::string name, std::unique_ptr<Target> target,
                                 std::vector<std::unique_ptr<Drafter>> drafters, RunSettings settings,
                                 Scheduler scheduler, LoopSettings loop)
    : name_(std::move(name)),
      target_(std::move(target)),
      settings_(std::move(settings)),
      draft_length_(draft_length_policy(settings_, drafters, loop)),
      in_flight_(loop.in_flight),
      queue_(scheduler),
      drafters_(name_, std::move(drafters), settings_.k_config, settings_.pruned_tree, settings_.sample_drafts,
                loop.threaded, loop.draft_threads, queue_) {
  SEED_CHECK(target_ != nullptr, kInvalidArgument) << name_ << ": needs a target";
  prefill_base_ = target_->prefill_stats();
  target_prefill_ = prefill_base_;
}

DraftPlan ScheduledEngine::draft_plan() const {
  DraftPlan plan;
  plan.k_config = settings_.k_config;
  if (settings_.pruned_tree) {
    plan.pct_expand = settings_.pruned_tree->expand;
    plan.pct_prune = settings_.pruned_tree->prune;
  }
  return plan;
}

std::unique_ptr<ScheduledEngine> ScheduledEngine::serial(std::string name, std::unique_ptr<Target> target,
                                                         std::unique_ptr<Drafter> drafter, RunSettings settings) {
  std::vector<std::unique_ptr<Drafter>> drafters;
  if (drafter) drafters.push_back(std::move(drafter));
  return std::make_unique<ScheduledEngine>(std::move(name), std::move(target), std::move(drafters),
                                           std::move(settings), Scheduler(SchedulePolicy::kFcfs, 1),
                                           LoopSettings{1, false, 1});
}

std::unique_ptr<ScheduledEngine> ScheduledEngine::lockstep(std::unique_ptr<Target> target, RunSettings settings,
                                                           Scheduler scheduler) {
  return std::make_unique<ScheduledEngine>("ar-batch", std::move(target), std::vector<std::unique_ptr<Drafter>>{},
                                           std::move(settings), scheduler, LoopSettings{0, false, 1});
}

std::unique_ptr<ScheduledEngine> ScheduledEngine::seed(std::string name, std::unique_ptr<Target> target,
                                                       std::vector<std::unique_ptr<Drafter>> drafters,
                                                       RunSettings settings, Scheduler scheduler, int draft_threads) {
  SEED_CHECK(!drafters.empty(), kInvalidArgument) << name << ": needs at least one drafter";
  return std::make_unique<ScheduledEngine>(std::move(name), std::move(target), std::move(drafters),
                                           std::move(settings), scheduler, LoopSettings{0, true, draft_threads});
}

EngineStats ScheduledEngine::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

void ScheduledEngine::reset_stats() {
  std::lock_guard<std::mutex> lock(mutex_);
  stats_ = {};
  prefill_base_ = target_prefill_;
  queue_.restart_schedule();
  if (in_engine_ > 0) busy_since_ = Clock::now();
}

void ScheduledEngine::start_more() {
  const size_t limit = in_flight_ == 0 ? std::numeric_limits<size_t>::max() : in_flight_;
  std::vector<Sequence*> started;
  while (running_ < limit) {
    // The first call after the one served last that has a request to start.
    Call* call = nullptr;
    auto it = calls_.upper_bound(last_started_);
    for (size_t n = 0; n < calls_.size(); ++n, ++it) {
      if (it == calls_.end()) it = calls_.begin();
      if (it->second->next < it->second->seqs.size()) {
        call = it->second.get();
        break;
      }
    }
    if (call == nullptr) break;
    Sequence& seq = call->seqs[call->next];
    if (!seq.output->finished()) {
      seq.kv_tokens = kv_tokens_at_most(seq);
      if (!fits_in_cache(seq.kv_tokens)) break;  // until a running sequence ends
    }
    last_started_ = call->id;
    ++call->next;
    if (seq.output->finished()) continue;  // rejected by prepare_sequences, or cancelled
    target_->start(seq.slot, seq.prompt, target_settings(*seq.request));
    seq.started = true;
    kv_reserved_ += seq.kv_tokens;
    unseen_.push_back(&seq);
    ++running_;
    if (draft_depth(seq, *target_, 0) < 0) {
      seq.output->end(FinishReason::kContext);
      retire(*call, seq, false);
      continue;
    }
    started.push_back(&seq);
  }
  // Draft lengths once every start is counted: the forward that verifies
  // the first drafts takes them all.
  std::vector<DraftTask> starts;  // drafted together
  for (Sequence* seq : started) {
    if (seq->output->finished()) continue;  // cancelled by a request retired after it started
    starts.push_back(DraftTask::start(*seq, depth_of(*seq)));
  }
  post(std::move(starts));
}

int64_t ScheduledEngine::kv_tokens_at_most(const Sequence& seq) const {
  const int64_t shape = static_cast<int64_t>(
      draft_shape(*seq.request, settings_.k_config, settings_.pruned_tree.has_value()).size());
  const int64_t longest = std::min<int64_t>(
      static_cast<int64_t>(seq.prompt.size()) + seq.request->max_new_tokens + shape + 1, target_->max_positions());
  // Copy-on-write of a shared tail block can take one block more.
  return longest + kKvBlockSlack;
}

bool ScheduledEngine::fits_in_cache(int64_t tokens) const {
  const int64_t capacity = target_->kv_token_capacity();
  return capacity <= 0 || running_ == 0 || kv_reserved_ + tokens <= capacity;
}

bool ScheduledEngine::length_varies(const GenRequest& request) const {
  return request.draft_length == 0 && (request.sampling.greedy() || !settings_.sample_drafts);
}

int ScheduledEngine::depth_of(const Sequence& seq) {
  const GenRequest& request = *seq.request;
  if (draft_length_ && length_varies(request)) {
    const size_t width = queue_.full_width(std::max<size_t>(calls_.size(), 1), std::max<size_t>(running_, 1));
    const bool caught_up = seq.output->tokens().empty() || (seq.drafter_started && seq.undrafted.empty());
    return draft_depth(seq, *target_, draft_length_->next(static_cast<double>(width), caught_up, seq.acceptance));
  }
  const size_t shape = draft_shape(request, settings_.k_config, settings_.pruned_tree.has_value()).size();
  return draft_depth(seq, *target_, static_cast<int>(shape));
}

void ScheduledEngine::measure_round(const std::vector<Proposal*>& proposals, const std::vector<Sequence*>& verified,
                                    const std::vector<Verdict>& verdicts, std::optional<double> verify_s, bool wider) {
  if (!draft_length_) return;
  int64_t drafted = 0;
  for (size_t i = 0; i < proposals.size(); ++i) {
    const DraftTree& draft = proposals[i]->draft;
    const GenRequest& request = *verified[i]->request;
    drafted += static_cast<int64_t>(draft.tokens.size());
    // A step's cost from steady rounds only: a sequence's first proposal
    // also computed its prompt, one after rounds without drafts their tokens.
    if (proposals[i]->verdicts == 1 && proposals[i]->draft_timed) {
      draft_length_->add_draft(static_cast<int64_t>(draft.tokens.size()), proposals[i]->draft_s,
                               proposals[i]->draft_batch);
    }
    if (length_varies(request) && !draft.tokens.empty()) {
      const auto accepted = static_cast<int64_t>(verdicts[i].accepted.size());
      draft_length_->add_verdict(accepted, accepted < static_cast<int64_t>(draft.tokens.size()));  // a chain
    }
  }
  draft_length_->add_forward(static_cast<int64_t>(proposals.size()), drafted, verify_s, wider);
}

void ScheduledEngine::post(std::vector<DraftTask> tasks) {
  for (const DraftTask& task : tasks) {
    if (task.kind != DraftTask::kFinish) task.seq->drafting = true;
  }
  drafters_.post(std::move(tasks));
}

void ScheduledEngine::free_target(Call& call, Sequence& seq) {
  settle(seq, seconds_since(call.start));
  --call.unsettled;
  if (!seq.started) return;
  target_->finish(seq.slot);
  --running_;
  kv_reserved_ -= seq.kv_tokens;
}

void ScheduledEngine::retire(Call& call, Sequence& seq, bool drafter_holds_it) {
  free_target(call, seq);
  if (drafter_holds_it) post({DraftTask::finish(seq)});
  std::vector<Sequence*> cancelled;
  try {
    cancelled = cancelled_by(call.on_complete, seq, call.seqs);
  } catch (...) {
    // The caller's callback failed: its call ends with that error, the
    // calls beside it go on.
    if (!call.error) call.error = std::current_exception();
    cancelled.clear();
    for (Sequence& other : call.seqs) {
      if (other.completion.has_value()) continue;  // settled
      if (!other.output->finished()) other.output->end(FinishReason::kCancelled);
      cancelled.push_back(&other);
    }
  }
  for (Sequence* other : cancelled) {
    free_target(call, *other);
    if (other->started) post({DraftTask::finish(*other)});
  }
}

void ScheduledEngine::step() {
  const bool single = team_width_.single();
  const TeamThreads team(single ? 1 : omp_get_max_threads());
  if (!unseen_.empty() && queue_.empty() && drafters_.busy_threads() == 0) {
    // Nothing to verify until draft ranks are done: the target computes
    // the prompts it will verify first meanwhile. Drafters here share its
    // cores, so the loop below drafts on all of them and the prompts are
    // computed in the forward that verifies the drafts, as a serial
    // engine's are (on two cores, a 1B target's prompts computed on one
    // while the other drafted made its 48-token requests 1.15x slower).
    std::vector<uint64_t> slots;
    std::vector<Sequence*> fresh;
    for (Sequence* seq : unseen_) {
      if (seq->output->finished() || seq->target_seen) continue;
      slots.push_back(seq->slot);
      fresh.push_back(seq);
    }
    unseen_.clear();
    if (!slots.empty()) {
      const PrefillStats before = target_->prefill_stats();
      const Clock::time_point t0 = Clock::now();
      drafters_.wake();  // the first proposals are drafted meanwhile
      target_->prefill(slots);
      account(seconds_since(t0), {}, fresh, before);
    }
  }
  // The target's thread drafts what waits for an idle drafter, rather than
  // wait for the drafter threads, when it has nothing to verify or when
  // its forward takes every ready draft (a round's drafts then join one
  // forward). What is left drafts on the drafters' threads while the
  // target verifies.
  while ((queue_.empty() || queue_.takes_every_ready()) && drafters_.draft_here(!single)) {
  }
  drafters_.wake();
  std::vector<Proposal> taken = queue_.take();
  std::vector<VerifyItem> items;
  std::vector<Proposal*> proposals;
  std::vector<Sequence*> verified, fresh;
  std::vector<uint64_t> slots;
  for (Proposal& p : taken) {
    Sequence& seq = *p.seq;
    seq.drafting = false;
    if (seq.output->finished()) continue;  // cancelled while drafting
    Call& call = *calls_.at(seq.caller);
    if (p.unavailable) {
      // Its drafter is gone: restart the sequence on another one from
      // everything accepted so far (drafts depend only on those tokens).
      std::vector<const Sequence*> running;
      for (const auto& entry : calls_) {
        for (const Sequence& s : entry.second->seqs) {
          if (s.started) running.push_back(&s);
        }
      }
      drafters_.reassign(seq, running);
      {
        std::lock_guard<std::mutex> lock(mutex_);
        stats_.drafter_faults += 1;
      }
      std::vector<int32_t> accepted = seq.prompt;
      const std::vector<int32_t>& generated = seq.output->tokens();
      accepted.insert(accepted.end(), generated.begin(), generated.end());
      post({DraftTask::start(seq, depth_of(seq), std::move(accepted))});
      continue;
    }
    if (!p.error.empty()) {
      seq.output->end(FinishReason::kError, p.error);
      retire(call, seq, false);
      continue;
    }
    seq.stats.draft_s += p.draft_s;
    items.push_back({seq.slot, &p.draft});
    proposals.push_back(&p);
    verified.push_back(&seq);
    slots.push_back(seq.slot);
    if (!seq.target_seen) fresh.push_back(&seq);
  }
  if (items.empty()) return;
  const PrefillStats before = target_->prefill_stats();
  const Clock::time_point t0 = Clock::now();
  // A forward while no drafter works takes the drafters' cores too, as
  // plain batching would have them.
  const bool wider = !single && drafters_.busy_threads() > 0 && drafters_.idle();
  std::vector<Verdict> verdicts;
  int threads = 0;
  {
    const TeamThreads wider_team(omp_get_max_threads() + (wider ? drafters_.busy_threads() : 0));
    threads = omp_get_max_threads();
    verdicts = target_->verify(items);
  }
  const double verify_s = seconds_since(t0);
  account(verify_s, verified, fresh, before);
  if (fresh.empty()) {
    // A forward that warmed up a CUDA graph costs many replays: untimed.
    const bool timed = target_prefill_.graph_warm_ups == before.graph_warm_ups;
    measure_round(proposals, verified, verdicts, timed ? std::optional<double>(verify_s) : std::nullopt, wider);
    int64_t rows = 0;
    for (const VerifyItem& item : items) rows += 1 + static_cast<int64_t>(item.draft->tokens.size());
    if (timed) team_width_.add(rows, verify_s, threads > 1);
  }
  queue_.verified(slots);
  std::vector<DraftTask> next;  // drafted together
  for (size_t i = 0; i < verified.size(); ++i) {
    Sequence& seq = *verified[i];
    seq.stats.verify_s += verify_s / static_cast<double>(verified.size());
    if (seq.output->finished()) continue;  // cancelled by a request retired before it
    Call& call = *calls_.at(seq.caller);
    const DraftTree& draft = proposals[i]->draft;
    if (draft_length_ && length_varies(*seq.request)) {
      const auto accepted = static_cast<int64_t>(verdicts[i].accepted.size());
      if (draft.tokens.empty()) seq.acceptance.add_undrafted_round();
      else seq.acceptance.add_verdict(accepted, accepted < static_cast<int64_t>(draft.tokens.size()));  // a chain
    }
    bool done = apply_verdict(seq, draft, verdicts[i]);
    const int depth = done ? 0 : depth_of(seq);
    if (!done && depth < 0) {
      seq.output->end(FinishReason::kContext);
      done = true;
    }
    if (done) {
      retire(call, seq, true);
    } else {
      next.push_back(DraftTask::advance(seq, verdicts[i], depth));
    }
  }
  post(std::move(next));
}

void ScheduledEngine::account(double seconds, const std::vector<Sequence*>& verified,
                              const std::vector<Sequence*>& started, const PrefillStats& before) {
  const PrefillStats after = target_->prefill_stats();
  // The prompt tokens this operation computed belong to the sequences it
  // started, by prompt length (or, if none, to all it verified).
  const std::vector<Sequence*>& sharers = started.empty() ? verified : started;
  double prompt = 0;
  for (const Sequence* seq : sharers) prompt += static_cast<double>(seq->prompt.size());
  const double computed = static_cast<double>(after.computed_tokens - before.computed_tokens);
  for (Sequence* seq : sharers) {
    if (prompt > 0) seq->stats.prefill_share += computed * static_cast<double>(seq->prompt.size()) / prompt;
  }
  for (Sequence* seq : started) seq->target_seen = true;
  for (Sequence* seq : verified) {
    seq->target_seen = true;
    seq->stats.target_share += 1.0 / static_cast<double>(verified.size());
  }
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.target_busy_s += seconds;
  if (!verified.empty()) {
    const auto width = static_cast<int64_t>(verified.size());
    stats_.target_forwards += 1;
    stats_.forward_sequences += width;
    stats_.peak_forward_sequences = std::max(stats_.peak_forward_sequences, width);
  }
  note_prefill(after);
}

void ScheduledEngine::note_prefill(const PrefillStats& after) {
  stats_.prefill = after.since(prefill_base_);
  target_prefill_ = after;
}

}  // namespace seed::spec
