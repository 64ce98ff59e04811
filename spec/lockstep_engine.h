// LockstepEngine (`ar-batch`): every unfinished request advances one token
// per round, all of them in one batched target forward (up to max_batch per
// forward). The SEED paper's "parallel" strategy: the target's width, not
// speculation, is what it exploits.
#pragma once

#include <memory>
#include <string>

#include "spec/engine.h"
#include "spec/request_run.h"
#include "spec/target.h"

namespace seed::spec {

class LockstepEngine : public Engine {
 public:
  LockstepEngine(std::unique_ptr<Target> target, RunSettings settings, int max_batch);

  using Engine::generate;
  std::vector<Completion> generate(const std::vector<GenRequest>& requests,
                                   const CompletionCallback& on_complete) override;
  std::string name() const override { return "ar-batch"; }
  EngineStats stats() const override { return stats_; }
  void reset_stats() override { stats_ = {}; }

 private:
  std::unique_ptr<Target> target_;
  RunSettings settings_;
  int max_batch_;
  EngineStats stats_;
};

}  // namespace seed::spec
