#include "spec/lockstep_engine.h"

#include <algorithm>

#include "models/base/error.h"

namespace seed::spec {

LockstepEngine::LockstepEngine(std::unique_ptr<Target> target, RunSettings settings, int max_batch)
    : target_(std::move(target)), settings_(std::move(settings)), max_batch_(max_batch) {
  SEED_CHECK(max_batch_ >= 1, kInvalidArgument) << "ar-batch: max_batch " << max_batch_ << " < 1";
}

std::vector<Completion> LockstepEngine::generate(const std::vector<GenRequest>& requests,
                                                 const CompletionCallback& on_complete) {
  const Clock::time_point start = Clock::now();
  const PrefillStats prefill_before = target_->prefill_stats();
  std::vector<Sequence> seqs = prepare_sequences(requests, settings_, *target_);
  std::vector<Sequence*> active;
  for (Sequence& seq : seqs) {
    if (seq.output->finished()) continue;
    target_->start(seq.slot, seq.prompt, target_settings(*seq.request));
    active.push_back(&seq);
  }
  const DraftTree none;
  double target_s = 0;
  int64_t forwards = 0;
  const auto retire = [&](Sequence* seq) {
    settle(*seq, seconds_since(start));
    target_->finish(seq->slot);
    for (Sequence* cancelled : cancelled_by(on_complete, *seq, seqs)) {
      settle(*cancelled, seconds_since(start));
      target_->finish(cancelled->slot);
    }
  };
  while (!active.empty()) {
    std::vector<Sequence*> next;
    for (size_t from = 0; from < active.size(); from += static_cast<size_t>(max_batch_)) {
      const size_t to = std::min(active.size(), from + static_cast<size_t>(max_batch_));
      std::vector<VerifyItem> items;
      std::vector<Sequence*> batch;
      for (size_t i = from; i < to; ++i) {
        if (active[i]->output->finished()) continue;  // cancelled
        if (draft_depth(*active[i], *target_, 0) < 0) {
          active[i]->output->end(FinishReason::kContext);
          retire(active[i]);
          continue;
        }
        items.push_back({active[i]->slot, &none});
        batch.push_back(active[i]);
      }
      if (items.empty()) continue;
      const Clock::time_point t0 = Clock::now();
      const std::vector<Verdict> verdicts = target_->verify(items);
      const double verify_s = seconds_since(t0);
      target_s += verify_s;
      forwards += 1;
      for (size_t b = 0; b < batch.size(); ++b) {
        batch[b]->stats.verify_s += verify_s / static_cast<double>(batch.size());
        if (batch[b]->output->finished()) continue;  // cancelled by a request retired before it
        if (apply_verdict(*batch[b], none, verdicts[b])) {
          retire(batch[b]);
        } else {
          next.push_back(batch[b]);
        }
      }
    }
    active = std::move(next);
  }
  return take_completions(seqs, stats_, seconds_since(start), target_s, forwards, prefill_before,
                          target_->prefill_stats());
}

}  // namespace seed::spec
