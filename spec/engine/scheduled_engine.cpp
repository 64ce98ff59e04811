#include "spec/engine/scheduled_engine.h"

#include <cstdint>

#include "models/base/error.h"

namespace seed::spec {

ScheduledEngine::ScheduledEngine(std::string name, std::unique_ptr<Target> target,
                                 std::vector<std::unique_ptr<Drafter>> drafters, RunSettings settings,
                                 Scheduler scheduler, LoopSettings loop)
    : name_(std::move(name)),
      target_(std::move(target)),
      settings_(std::move(settings)),
      in_flight_(loop.in_flight),
      queue_(scheduler),
      drafters_(name_, std::move(drafters), settings_.k_config, settings_.pruned_tree, loop.threaded,
                loop.draft_threads, queue_) {
  SEED_CHECK(target_ != nullptr, kInvalidArgument) << name_ << ": needs a target";
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

std::vector<Completion> ScheduledEngine::generate(const std::vector<GenRequest>& requests,
                                                  const CompletionCallback& on_complete) {
  const Clock::time_point start = Clock::now();
  const PrefillStats prefill_before = target_->prefill_stats();
  std::vector<Sequence> seqs = prepare_sequences(requests, settings_, *target_);
  queue_.restart_schedule();
  drafters_.assign(seqs);
  // How deep the next draft of `seq` may be: its shape, the context, its budget.
  const auto depth_of = [&](const Sequence& seq) {
    const size_t shape = draft_shape(*seq.request, settings_.k_config, settings_.pruned_tree.has_value()).size();
    return draft_depth(seq, *target_, static_cast<int>(shape));
  };
  const size_t in_flight = in_flight_ == 0 ? seqs.size() : in_flight_;
  std::vector<bool> started(seqs.size(), false);
  std::vector<Sequence*> unseen;  // started since the last prefill
  size_t next = 0;  // the next request to start
  size_t running = 0;
  double target_s = 0;
  int64_t forwards = 0;

  // Settles `seq` and frees what it holds in the target.
  const auto free_target = [&](Sequence& seq) {
    settle(seq, seconds_since(start));
    if (!started[seq.slot]) return;
    target_->finish(seq.slot);
    --running;
  };
  // Retires a finished request and the ones its completion cancels: their
  // proposals still queued or being drafted are dropped when they arrive.
  // `drafter_holds_it`: false when the drafter already let go (it failed).
  const auto retire = [&](Sequence& seq, bool drafter_holds_it) {
    free_target(seq);
    if (drafter_holds_it) drafters_.post(DraftTask::finish(seq));
    for (Sequence* cancelled : cancelled_by(on_complete, seq, seqs)) {
      free_target(*cancelled);
      if (started[cancelled->slot]) drafters_.post(DraftTask::finish(*cancelled));
    }
  };
  const auto start_more = [&] {
    while (running < in_flight && next < seqs.size()) {
      Sequence& seq = seqs[next++];
      if (seq.output->finished()) continue;  // rejected by prepare_sequences, or cancelled
      target_->start(seq.slot, seq.prompt, target_settings(*seq.request));
      started[seq.slot] = true;
      unseen.push_back(&seq);
      ++running;
      const int depth = depth_of(seq);
      if (depth < 0) {
        seq.output->end(FinishReason::kContext);
        retire(seq, false);
        continue;
      }
      drafters_.post(DraftTask::start(seq, depth));
    }
  };

  try {
    start_more();
    while (running > 0) {
      if (!unseen.empty() && queue_.empty()) {
        // Nothing to verify until the drafters are done: the target computes
        // the prompts it will verify first meanwhile.
        std::vector<uint64_t> slots;
        for (const Sequence* seq : unseen) {
          if (!seq->output->finished()) slots.push_back(seq->slot);
        }
        unseen.clear();
        const Clock::time_point t0 = Clock::now();
        target_->prefill(slots);
        target_s += seconds_since(t0);
      }
      std::vector<Proposal> taken = queue_.take();
      std::vector<VerifyItem> items;
      std::vector<Proposal*> verified;
      std::vector<uint64_t> slots;
      for (Proposal& p : taken) {
        Sequence& seq = *p.seq;
        if (seq.output->finished()) continue;  // cancelled while drafting
        if (p.unavailable) {
          // Its drafter is gone: restart the sequence on another one from
          // everything accepted so far (drafts depend only on those tokens).
          drafters_.reassign(seq, seqs);
          stats_.drafter_faults += 1;
          std::vector<int32_t> accepted = seq.prompt;
          const std::vector<int32_t>& generated = seq.output->tokens();
          accepted.insert(accepted.end(), generated.begin(), generated.end());
          drafters_.post(DraftTask::start(seq, depth_of(seq), std::move(accepted)));
          continue;
        }
        if (!p.error.empty()) {
          seq.output->end(FinishReason::kError, p.error);
          retire(seq, false);
          continue;
        }
        seq.stats.draft_s += p.draft_s;
        items.push_back({seq.slot, &p.draft});
        verified.push_back(&p);
        slots.push_back(seq.slot);
      }
      if (!items.empty()) {
        const Clock::time_point t0 = Clock::now();
        const std::vector<Verdict> verdicts = target_->verify(items);
        const double verify_s = seconds_since(t0);
        target_s += verify_s;
        forwards += 1;
        queue_.verified(slots);
        for (size_t i = 0; i < verified.size(); ++i) {
          Sequence& seq = *verified[i]->seq;
          seq.stats.verify_s += verify_s / static_cast<double>(verified.size());
          if (seq.output->finished()) continue;  // cancelled by a request retired before it
          bool done = apply_verdict(seq, verified[i]->draft, verdicts[i]);
          const int depth = done ? 0 : depth_of(seq);
          if (!done && depth < 0) {
            seq.output->end(FinishReason::kContext);
            done = true;
          }
          if (done) {
            retire(seq, true);
          } else {
            drafters_.post(DraftTask::advance(seq, verdicts[i], depth));
          }
        }
      }
      start_more();
    }
  } catch (...) {
    // The target failed: no request can go on. Free the drafters' slots.
    drafters_.drain();
    for (Sequence& seq : seqs) {
      if (started[seq.slot] && !seq.output->finished()) drafters_.post(DraftTask::finish(seq));
    }
    drafters_.drain();
    throw;
  }
  drafters_.drain();
  return take_completions(seqs, stats_, seconds_since(start), target_s, forwards, prefill_before,
                          target_->prefill_stats());
}

}  // namespace seed::spec
