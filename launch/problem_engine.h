// The engine as one problem's search sees it in `seed run`: generate() goes
// to the run's shared engine, and stats() are this problem's own, summed
// from its requests' completions, so that they do not depend on what other
// problems run beside it: tokens, drafts and acceptance exactly, and its
// share of the target's forwards and of the prompt tokens the target
// computed (RequestStats::target_share, prefill_share; whole numbers when
// the problem ran alone). Borrows the shared engine; one thread at a time.
#pragma once

#include <cmath>
#include <cstdint>

#include "spec/api/engine.h"

namespace seed::launch {

class ProblemEngine : public spec::Engine {
 public:
  explicit ProblemEngine(spec::Engine& shared) : shared_(shared) {}

  using spec::Engine::generate;
  std::vector<spec::Completion> generate(const std::vector<spec::GenRequest>& requests,
                                         const spec::CompletionCallback& on_complete) override {
    std::vector<spec::Completion> out = shared_.generate(requests, on_complete);
    for (size_t i = 0; i < out.size(); ++i) {
      const spec::RequestStats& s = out[i].stats;
      spec::add_completion(stats_, requests[i].kind, s);
      stats_.prefill.prompt_tokens += s.prompt_tokens;
      target_share_ += s.target_share;
      prefill_share_ += s.prefill_share;
    }
    return out;
  }
  void end_group(uint64_t group) noexcept override { shared_.end_group(group); }
  std::string name() const override { return shared_.name(); }
  spec::EngineStats stats() const override {
    spec::EngineStats s = stats_;
    s.target_forwards = std::llround(target_share_);
    s.prefill.computed_tokens = std::llround(prefill_share_);
    return s;
  }
  void reset_stats() override {
    stats_ = {};
    target_share_ = prefill_share_ = 0;
  }

 private:
  spec::Engine& shared_;
  spec::EngineStats stats_;
  double target_share_ = 0;
  double prefill_share_ = 0;
};

}  // namespace seed::launch
