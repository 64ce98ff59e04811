// EngineTest: the fixture of the engines' invariant tests (engine_*_test.cpp),
// on the tiny random model pairs of engine_fixtures.h, written to model
// folders once for the suite: engines loaded through make_engine, `seed` and
// `seed-batch` built by hand so that their schedule can be read, and six
// requests of different prompt lengths. The suite owns the pairs from
// SetUpTestSuite to TearDownTestSuite.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "models/causal_lm.h"
#include "spec/drafters/model/draft_model_drafter.h"
#include "spec/engine/engine_factory.h"
#include "spec/engine/model_target.h"
#include "spec/engine/scheduled_engine.h"
#include "tests/spec/engine_fixtures.h"

namespace seed::spec {

using ::seed::testing::ModelPair;

class EngineTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    pairs_ = new ::seed::testing::TestModelPairs("seed_engine_test");
    pair_ = &pairs_->pair;
    small_ = &pairs_->small;
  }
  static void TearDownTestSuite() { delete pairs_; }

  static std::unique_ptr<Engine> engine(const std::string& name, std::vector<int> k_config = {}, int drafters = 2,
                                        const ModelPair* pair = nullptr, bool prefix_cache = true,
                                        DraftTruncation cut = {}, const std::string& device = "cpu",
                                        LogitReads reads = LogitReads::kAuto, bool sample_drafts = false) {
    EngineOptions o;
    o.sample_drafts = sample_drafts;
    o.device = device;
    o.logit_reads = reads;
    o.draft_cut = cut;
    o.prefix_cache = prefix_cache;
    o.engine = EngineKind::parse(name);
    o.target = (pair ? pair : pair_)->target;
    o.draft = (pair ? pair : pair_)->draft;
    o.draft_length = 3;
    o.k_config = std::move(k_config);
    o.drafters = drafters;
    return make_engine(o);
  }

  // `seed` (kFcfs, one proposal per forward) or `seed-batch` (kBatch), built
  // by hand so that its schedule can be read: chains of three, `drafters`
  // draft-model drafters on as many threads.
  static std::unique_ptr<ScheduledEngine> scheduled_seed(SchedulePolicy policy, int drafters) {
    auto target = std::shared_ptr<models::CausalLM>(models::CausalLM::load(pair_->target));
    const std::shared_ptr<const models::CausalLM> draft = models::CausalLM::load(pair_->draft);
    RunSettings settings;
    settings.k_config = {1, 1, 1};
    std::vector<std::unique_ptr<Drafter>> handles;
    for (int i = 0; i < drafters; ++i) handles.push_back(make_draft_model_drafter(draft));
    const int max_batch = policy == SchedulePolicy::kFcfs ? 1 : 16;
    return ScheduledEngine::seed(policy == SchedulePolicy::kFcfs ? "seed" : "seed-batch",
                                 std::make_unique<ModelTarget>(target), std::move(handles), settings,
                                 Scheduler(policy, max_batch), drafters);
  }

  // Six requests with prompts of different lengths and their own streams.
  static std::vector<GenRequest> requests(float temperature, int64_t max_new = 20) {
    return ::seed::testing::varied_requests(6, temperature, max_new);
  }

  static inline ::seed::testing::TestModelPairs* pairs_ = nullptr;
  static inline ModelPair* pair_ = nullptr;
  static inline ModelPair* small_ = nullptr;
  // Sampled engines' first two tokens against the target's p (chi-square),
  // on `device`, reading the target's logits as `reads` says; on `pair`
  // (over 8 tokens), else small_.
  static void expect_sampled_engines_lossless(const std::string& device, LogitReads reads = LogitReads::kAuto,
                                              const ModelPair* pair = nullptr);
};

}  // namespace seed::spec
