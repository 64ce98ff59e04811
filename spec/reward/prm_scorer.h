// PrmScorer: a StepScorer over a process reward model.
//
// A request is tokenized as the PRM was trained to read it (PrmTokenize):
// whole, its steps found by the step tag, or step by step, each step's tag
// appended as its token. Step j's reward is the PRM's at the j-th tag of
// the steps. The model runs through a KV cache with
// a prefix table, so scoring step t of a trajectory whose steps 1..t-1 were
// scored before computes only step t's tokens (and the part of a block
// before it): the search scores states as it grows them.
//
// Calls from several threads are batched: the first caller to find the
// model idle runs one forward over every request queued by then (its own
// and other problems'), in chunks of at most kMaxRowsPerForward tokens, and
// hands the results back; the others wait for theirs. The PRM runs beside
// the engine's target, on the calling threads.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "models/kv_cache.h"
#include "models/reward/process_reward_model.h"
#include "spec/api/step_scorer.h"
#include "spec/engine/engine_factory.h"

namespace seed::spec {

class PrmScorer : public StepScorer {
 public:
  // Tokens per block of the PRM's cache: a new step recomputes up to one
  // block less a token of what it follows, so blocks are smaller than a
  // generating engine's.
  static constexpr int64_t kBlockSize = 8;
  static constexpr int64_t kMaxRowsPerForward = 2048;

  // `cache_options.block_size` is replaced by kBlockSize.
  PrmScorer(std::shared_ptr<const models::ProcessRewardModel> prm, models::KvCacheOptions cache_options = {});

  std::vector<StepScores> score(const std::vector<ScoreRequest>& batch) override;

 private:
  struct Job {
    const std::vector<ScoreRequest>* requests = nullptr;
    std::vector<StepScores> results;
    std::exception_ptr error;
    bool done = false;
  };
  // Scores every job (each gets its results or its error).
  void run(const std::vector<Job*>& jobs);

  std::shared_ptr<const models::ProcessRewardModel> prm_;
  models::KvCache cache_;  // the running caller's only
  std::mutex mutex_;
  std::condition_variable finished_;
  std::vector<Job*> queued_;
  bool running_ = false;
};

// The PRM in `model_dir` on the engine's device and CPU weight dtype, its
// KV cache bounded by a quarter of what kv_cache_options gives one cache;
// its weights load as the engine's models do (load_model: where the
// engine's loaded_models holds them, from there).
std::unique_ptr<StepScorer> load_prm_scorer(const std::string& model_dir, const EngineOptions& engine);

}  // namespace seed::spec
