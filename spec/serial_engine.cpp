#include "spec/serial_engine.h"

#include "models/base/error.h"

namespace seed::spec {

SerialEngine::SerialEngine(std::string name, std::unique_ptr<Target> target, std::unique_ptr<Drafter> drafter,
                           RunSettings settings)
    : name_(std::move(name)), target_(std::move(target)), drafter_(std::move(drafter)), settings_(std::move(settings)) {}

std::vector<Completion> SerialEngine::generate(const std::vector<GenRequest>& requests,
                                               const CompletionCallback& on_complete) {
  const Clock::time_point start = Clock::now();
  const PrefillStats prefill_before = target_->prefill_stats();
  std::vector<Sequence> seqs = prepare_sequences(requests, settings_, *target_);
  double target_s = 0;
  int64_t forwards = 0;
  for (Sequence& seq : seqs) {
    if (seq.output->finished()) continue;  // rejected by prepare_sequences, or cancelled
    run(seq, start, target_s, forwards);
    // Requests run one at a time: the ones cancelled have not started.
    for (Sequence* cancelled : cancelled_by(on_complete, seq, seqs)) settle(*cancelled, seconds_since(start));
  }
  return take_completions(seqs, stats_, seconds_since(start), target_s, forwards, prefill_before,
                          target_->prefill_stats());
}

void SerialEngine::run(Sequence& seq, Clock::time_point start, double& target_s, int64_t& forwards) {
  RequestOutput& output = *seq.output;
  const int shape_depth = drafter_ ? static_cast<int>(settings_.k_config.size()) : 0;
  target_->start(seq.slot, seq.prompt, target_settings(*seq.request));
  // A drafter failure ends this request only (the target's would end the run).
  const auto drafting = [&](auto&& step) {
    try {
      const Clock::time_point t0 = Clock::now();
      step();
      seq.stats.draft_s += seconds_since(t0);
      return true;
    } catch (const Error& e) {
      output.end(FinishReason::kError, std::string("drafter: ") + e.what());
      return false;
    }
  };
  bool ok = !drafter_ || drafting([&] { drafter_->start(seq.slot, seq.prompt, draft_settings(*seq.request, settings_.k_config)); });
  while (ok && !output.finished()) {
    const int depth = draft_depth(seq, *target_, shape_depth);
    if (depth < 0) {
      output.end(FinishReason::kContext);
      break;
    }
    DraftTree draft;
    if (drafter_ && !drafting([&] { draft = drafter_->propose(seq.slot, depth); })) break;
    const Clock::time_point t0 = Clock::now();
    const Verdict verdict = target_->verify({{seq.slot, &draft}}).front();
    const double verify_s = seconds_since(t0);
    seq.stats.verify_s += verify_s;
    target_s += verify_s;
    forwards += 1;
    if (apply_verdict(seq, draft, verdict)) break;
    if (drafter_ && !drafting([&] { drafter_->advance(seq.slot, verdict); })) break;
  }
  settle(seq, seconds_since(start));
  target_->finish(seq.slot);
  if (drafter_) drafter_->finish(seq.slot);
}

}  // namespace seed::spec
