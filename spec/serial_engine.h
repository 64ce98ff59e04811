// SerialEngine: one request after another (the SEED paper's baselines).
//   ar    no drafter: one target forward per token;
//   sd    a chain drafter: draft k, verify in one forward (Leviathan/Chen);
//   mcsd  a tree drafter (k_config such as {2, 2, 1}), verified in one
//         forward with tree attention (SpecInfer's multi-candidate rule).
#pragma once

#include <memory>
#include <string>

#include "models/tokenizer.h"
#include "spec/drafter.h"
#include "spec/engine.h"
#include "spec/request_run.h"
#include "spec/target.h"

namespace seed::spec {

class SerialEngine : public Engine {
 public:
  // `drafter` null: autoregressive. `settings.k_config` is the draft shape.
  SerialEngine(std::string name, std::unique_ptr<Target> target, std::unique_ptr<Drafter> drafter,
               RunSettings settings);

  using Engine::generate;
  std::vector<Completion> generate(const std::vector<GenRequest>& requests,
                                   const CompletionCallback& on_complete) override;
  std::string name() const override { return name_; }
  EngineStats stats() const override { return stats_; }
  void reset_stats() override { stats_ = {}; }

 private:
  // Runs one request to completion, adding to the target's time and forwards.
  void run(Sequence& seq, Clock::time_point start, double& target_s, int64_t& forwards);

  std::string name_;
  std::unique_ptr<Target> target_;
  std::unique_ptr<Drafter> drafter_;
  RunSettings settings_;
  EngineStats stats_;
};

}  // namespace seed::spec
