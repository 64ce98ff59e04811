// The SEED engine's drafters: a drafter failure becomes that request's error
// only, the requests of a vanished drafter move on with the same tokens (or
// the target decodes alone), and drafters share one draft model across
// threads.
#include <gtest/gtest.h>

#include <thread>

#include "tests/spec/engine_test_fixture.h"

namespace seed::spec {
namespace {

using ::seed::testing::tokens_of;

// Fails the given slot's third proposal, like a drafter that loses its model.
class FailingDrafter : public Drafter {
 public:
  FailingDrafter(std::shared_ptr<const models::CausalLM> model, uint64_t failing_slot)
      : inner_(make_draft_model_drafter(std::move(model))), failing_slot_(failing_slot) {}
  void start(uint64_t slot, const std::vector<int32_t>& tokens, const DraftSettings& settings) override {
    inner_->start(slot, tokens, settings);
  }
  DraftTree propose(uint64_t slot, int max_depth) override {
    if (slot == failing_slot_ && ++proposals_ == 3) SEED_FAIL(kIo) << "draft weights vanished";
    return inner_->propose(slot, max_depth);
  }
  void advance(uint64_t slot, const Verdict& verdict) override { inner_->advance(slot, verdict); }
  void finish(uint64_t slot) override { inner_->finish(slot); }

 private:
  std::unique_ptr<Drafter> inner_;
  uint64_t failing_slot_;
  int proposals_ = 0;
};

TEST_F(EngineTest, ADrafterFailureEndsOnlyItsRequest) {
  const auto sd = tokens_of(engine("sd")->generate(requests(1.0f)));
  auto target = std::shared_ptr<models::CausalLM>(models::CausalLM::load(pair_->target));
  const std::shared_ptr<const models::CausalLM> draft = models::CausalLM::load(pair_->draft);
  RunSettings settings;
  settings.k_config = {1, 1, 1};
  std::vector<std::unique_ptr<Drafter>> drafters;
  drafters.push_back(make_draft_model_drafter(draft));
  drafters.push_back(std::make_unique<FailingDrafter>(draft, 3));
  auto seed = ScheduledEngine::seed("seed", std::make_unique<ModelTarget>(target), std::move(drafters), settings,
                                    Scheduler(SchedulePolicy::kFcfs, 1), 1);
  auto serial = ScheduledEngine::serial("sd", std::make_unique<ModelTarget>(target),
                                        std::make_unique<FailingDrafter>(draft, 3), settings);
  for (Engine* e : std::vector<Engine*>{seed.get(), serial.get()}) {
    const std::vector<Completion> out = e->generate(requests(1.0f));
    for (size_t i = 0; i < out.size(); ++i) {
      if (i == 3) {
        EXPECT_EQ(out[i].finish, FinishReason::kError) << e->name();
        EXPECT_NE(out[i].error.find("draft weights vanished"), std::string::npos) << out[i].error;
      } else {
        EXPECT_EQ(out[i].tokens, sd[i]) << e->name() << " request " << i;
      }
    }
  }
  // The engine stays usable after a failed request.
  EXPECT_EQ(tokens_of(seed->generate(requests(1.0f)))[0], sd[0]);
}

// A drafter whose host goes away after `proposals` proposals: every later
// call fails with kUnavailable, as a remote drafter on a dead rank does.
class VanishingDrafter : public Drafter {
 public:
  VanishingDrafter(std::shared_ptr<const models::CausalLM> model, int proposals)
      : inner_(make_draft_model_drafter(std::move(model))), left_(proposals) {}
  void start(uint64_t slot, const std::vector<int32_t>& tokens, const DraftSettings& settings) override {
    check();
    inner_->start(slot, tokens, settings);
  }
  DraftTree propose(uint64_t slot, int max_depth) override {
    check();
    --left_;
    return inner_->propose(slot, max_depth);
  }
  void advance(uint64_t slot, const Verdict& verdict) override {
    check();
    inner_->advance(slot, verdict);
  }
  void finish(uint64_t slot) override { inner_->finish(slot); }

 private:
  void check() const {
    if (left_ <= 0) SEED_FAIL(kUnavailable) << "draft rank 2 stopped answering";
  }
  std::unique_ptr<Drafter> inner_;
  int left_;
};

TEST_F(EngineTest, SequencesOfAVanishedDrafterMoveOnWithTheSameTokens) {
  auto target = std::shared_ptr<models::CausalLM>(models::CausalLM::load(pair_->target));
  const std::shared_ptr<const models::CausalLM> draft = models::CausalLM::load(pair_->draft);
  RunSettings settings;
  settings.k_config = {1, 1, 1};
  for (float temperature : {0.0f, 1.0f}) {
    const auto sd = tokens_of(engine("sd")->generate(requests(temperature)));
    std::vector<std::unique_ptr<Drafter>> drafters;
    drafters.push_back(make_draft_model_drafter(draft));
    drafters.push_back(std::make_unique<VanishingDrafter>(draft, 4));
    drafters.push_back(make_draft_model_drafter(draft));
    auto seed = ScheduledEngine::seed("seed", std::make_unique<ModelTarget>(target), std::move(drafters), settings,
                                      Scheduler(SchedulePolicy::kFcfs, 1), 1);
    EXPECT_EQ(tokens_of(seed->generate(requests(temperature))), sd) << temperature;
    EXPECT_EQ(seed->stats().drafter_faults, 2) << "the vanished drafter hosted requests 1 and 4";
    // The next call runs on the live drafters only.
    EXPECT_EQ(tokens_of(seed->generate(requests(temperature))), sd) << temperature;
    EXPECT_EQ(seed->stats().drafter_faults, 2);
  }
}

TEST_F(EngineTest, WithEveryDrafterGoneTheTargetDecodesAlone) {
  auto target = std::shared_ptr<models::CausalLM>(models::CausalLM::load(pair_->target));
  const std::shared_ptr<const models::CausalLM> draft = models::CausalLM::load(pair_->draft);
  RunSettings settings;
  settings.k_config = {1, 1, 1};
  std::vector<std::unique_ptr<Drafter>> drafters;
  drafters.push_back(std::make_unique<VanishingDrafter>(draft, 3));
  auto seed = ScheduledEngine::seed("seed", std::make_unique<ModelTarget>(target), std::move(drafters), settings,
                                    Scheduler(SchedulePolicy::kFcfs, 1), 1);
  const std::vector<Completion> out = seed->generate(requests(0.0f));
  EXPECT_EQ(tokens_of(out), tokens_of(engine("ar")->generate(requests(0.0f))));
  for (const Completion& c : out) EXPECT_EQ(c.finish, FinishReason::kLength);
}

// Drafters hold the draft model itself, not copies of its (packed)
// weights, and draft on it from several threads at once exactly as one
// drafter alone does.
TEST_F(EngineTest, DraftersShareOneDraftModelAcrossThreads) {
  const std::shared_ptr<const models::CausalLM> draft = models::CausalLM::load(pair_->draft);
  DraftSettings settings;
  settings.k_config = {2, 1, 1};
  settings.seed = 5;
  const std::vector<GenRequest> batch = requests(1.0f);
  const auto drafts_of = [&](Drafter& drafter, size_t first, size_t step) {
    std::vector<std::vector<int32_t>> out(batch.size());
    for (size_t i = first; i < batch.size(); i += step) {
      DraftSettings own = settings;  // each thread its own copy
      own.stream = i;
      drafter.start(i, batch[i].prompt_tokens, own);
      out[i] = drafter.propose(i, 3).tokens;
    }
    return out;
  };
  const std::unique_ptr<Drafter> alone = make_draft_model_drafter(draft);
  const auto expected = drafts_of(*alone, 0, 1);

  std::vector<std::unique_ptr<Drafter>> drafters;
  for (int t = 0; t < 3; ++t) drafters.push_back(make_draft_model_drafter(draft));
  EXPECT_EQ(draft.use_count(), 5) << "the test, `alone` and three drafters hold one model";
  std::vector<std::vector<std::vector<int32_t>>> got(drafters.size());
  std::vector<std::thread> threads;
  for (size_t t = 0; t < drafters.size(); ++t) {
    threads.emplace_back([&, t] { got[t] = drafts_of(*drafters[t], t, drafters.size()); });
  }
  for (std::thread& thread : threads) thread.join();
  for (size_t i = 0; i < batch.size(); ++i) {
    EXPECT_FALSE(expected[i].empty());
    EXPECT_EQ(got[i % drafters.size()][i], expected[i]) << "request " << i;
  }
}

}  // namespace
}  // namespace seed::spec
