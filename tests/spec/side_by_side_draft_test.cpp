// Drafting several sequences side by side:
//   - a draft model's batch, and an EDD's, drafts slot for slot what each
//     slot drafts alone (greedy and sampled chains, trees, pruned trees;
//     slots started in the batch, sharing a prompt, or drafting less or
//     nothing);
//   - a forward that fails fails its whole batch, a slot that fails alone
//     in the default one-by-one batch fails alone;
//   - seed-batch with one drafter drafts each round as one batch, on the
//     thread that runs the target, and gives ar's tokens;
//   - woken work drafts on the drafter's thread in its own team size (ATen
//     gives a thread the process's at its first parallel op), work the
//     caller drafts itself in its team widened by the drafter's.
#include <ATen/Parallel.h>
#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "models/causal_lm.h"
#include "spec/drafters/model/draft_model_drafter.h"
#include "spec/drafters/model/edd_drafter.h"
#include "spec/engine/drafter_pool.h"
#include "spec/engine/engine_factory.h"
#include "spec/engine/logit_reads.h"
#include "spec/engine/model_target.h"
#include "spec/engine/scheduled_engine.h"
#include "spec/engine/team_threads.h"
#include "tests/spec/engine_fixtures.h"
#include "tests/spec/forwarding.h"

namespace seed::spec {
namespace {

using ::seed::testing::tokens_of;

class SideBySideDraftTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    pairs_ = new ::seed::testing::TestModelPairs("seed_side_by_side_test");
    edd_ = new std::string(::seed::testing::write_edd(pairs_->pair.target, pairs_->dir / "edd", 1));
  }
  static void TearDownTestSuite() {
    delete edd_;
    delete pairs_;
  }

  static std::shared_ptr<const models::CausalLM> draft() { return models::CausalLM::load(pairs_->pair.draft); }
  static std::unique_ptr<Drafter> drafter(bool edd) {
    return edd ? make_edd_drafter(models::CausalLM::load(*edd_)) : make_draft_model_drafter(draft());
  }

  static ::seed::testing::TestModelPairs* pairs_;
  static std::string* edd_;
};

::seed::testing::TestModelPairs* SideBySideDraftTest::pairs_ = nullptr;
std::string* SideBySideDraftTest::edd_ = nullptr;

DraftSettings settings(float temperature, std::vector<int> k_config, uint64_t stream,
                       std::optional<PrunedTree> pruned = std::nullopt) {
  DraftSettings s;
  s.sampling.temperature = temperature;
  s.seed = 11;
  s.stream = stream;
  s.k_config = std::move(k_config);
  s.pruned = pruned;
  return s;
}

void expect_same_tree(const DraftTree& batched, const DraftTree& alone, const std::string& where) {
  EXPECT_EQ(batched.tokens, alone.tokens) << where;
  EXPECT_EQ(batched.parents, alone.parents) << where;
  EXPECT_EQ(batched.q, alone.q) << where;
  EXPECT_EQ(batched.confidence, alone.confidence) << where;
  EXPECT_EQ(batched.deterministic, alone.deterministic) << where;
}

// The verdict that accepts the draft's first node (if any) and adds `bonus`.
// With `hidden` > 0 it carries, as a target keeping an EDD's layer does,
// hidden states of that width for the positions from `hidden_from` to the
// new bonus token's (made up: any values are an EDD's input).
Verdict first_node_and(const DraftTree& draft, int32_t bonus, int64_t hidden = 0, int64_t hidden_from = 0,
                       int64_t rows = 0) {
  Verdict verdict;
  if (!draft.tokens.empty()) {
    verdict.accepted = {0};
    verdict.tokens = {draft.tokens[0]};
  }
  verdict.bonus = bonus;
  verdict.tokens.push_back(bonus);
  verdict.hidden_from = hidden_from;
  for (int64_t i = 0; i < rows * hidden; ++i) {
    verdict.hidden.push_back(std::sin(0.37f * static_cast<float>(i + hidden_from * hidden)));
  }
  return verdict;
}

TEST_F(SideBySideDraftTest, ABatchDraftsWhatEachSlotDraftsAlone) {
  struct Shape {
    const char* name;
    float temperature;
    std::vector<int> k_config;
    std::optional<PrunedTree> pruned;
  };
  const std::vector<Shape> shapes = {{"greedy chain", 0.0f, {1, 1, 1, 1}, std::nullopt},
                                     {"sampled chain", 1.0f, {1, 1, 1, 1}, std::nullopt},
                                     {"sampled tree", 0.8f, {2, 2, 1}, std::nullopt},
                                     {"greedy tree", 0.0f, {2, 2, 1}, std::nullopt},
                                     {"pruned tree", 1.0f, {3, 3, 3}, PrunedTree{0.05f, 0.01f}}};
  // Slots 0 and 1 share a prompt; slot 3 starts a round late.
  const std::vector<std::vector<int32_t>> prompts = {{5, 9, 2, 7}, {5, 9, 2, 7}, {1}, {3, 3, 8, 1, 6, 4}};
  const int64_t edd_hidden = models::CausalLM::load(*edd_)->config().hidden_size;
  for (const bool edd : {false, true}) {
    for (const Shape& shape : shapes) {
      auto alone = drafter(edd);
      auto batched = drafter(edd);
      // An EDD slot's tokens so far: its verdicts bring their hidden states.
      std::vector<int64_t> length(prompts.size());
      for (size_t slot = 0; slot < prompts.size(); ++slot) length[slot] = static_cast<int64_t>(prompts[slot].size());
      size_t drafted = 0;
      for (uint64_t slot = 0; slot < prompts.size(); ++slot) {
        const DraftSettings s = settings(shape.temperature, shape.k_config, slot, shape.pruned);
        if (slot == 3) continue;
        alone->start(slot, prompts[slot], s);
        batched->start(slot, prompts[slot], s);
      }
      for (int round = 0; round < 4; ++round) {
        if (round == 1) {
          const DraftSettings s = settings(shape.temperature, shape.k_config, 3, shape.pruned);
          alone->start(3, prompts[3], s);
          batched->start(3, prompts[3], s);
        }
        std::vector<DraftAsk> asks;
        for (uint64_t slot = 0; slot < (round == 0 ? 3u : 4u); ++slot) {
          // Slot 2 drafts less in round 1 and nothing in round 2.
          const int depth = slot != 2 ? 4 : round == 1 ? 1 : round == 2 ? 0 : 4;
          asks.push_back({slot, depth});
        }
        const std::vector<DraftResult> results = batched->propose_batch(asks);
        ASSERT_EQ(results.size(), asks.size());
        for (size_t i = 0; i < asks.size(); ++i) {
          const std::string where = std::string(edd ? "EDD, " : "") + shape.name + ", round " +
                                    std::to_string(round) + ", slot " + std::to_string(asks[i].slot);
          ASSERT_FALSE(results[i].error) << where;
          const DraftTree expected = alone->propose(asks[i].slot, asks[i].max_depth);
          expect_same_tree(results[i].draft, expected, where);
          drafted += expected.tokens.size();
          if (asks[i].max_depth == 0) {
            EXPECT_TRUE(expected.tokens.empty()) << where;
          }
          // An EDD slot drafts from its second proposal on: the first
          // verdict brings the prompt's hidden states, the later ones those
          // from the last bonus token on.
          const uint64_t slot = asks[i].slot;
          const bool first = length[slot] == static_cast<int64_t>(prompts[slot].size());
          if (edd && first) {
            EXPECT_TRUE(expected.tokens.empty()) << where;
          }
          const int64_t rows = expected.tokens.empty() ? 1 : 2;
          const int64_t from = first ? 0 : length[slot] - 1;
          const Verdict verdict = first_node_and(expected, static_cast<int32_t>((round * 7 + slot) % 64),
                                                 edd ? edd_hidden : 0, from, length[slot] + rows - 1 - from);
          length[slot] += rows;
          alone->advance(asks[i].slot, verdict);
          batched->advance(asks[i].slot, verdict);
        }
      }
      EXPECT_GT(drafted, 8u) << (edd ? "EDD, " : "") << shape.name;
    }
  }
}

// A GPU's drafters read summaries of their rows where the logits are (top
// tokens, their probabilities, a sampled request's race winner drawn
// there) and copy whole rows only for pruned trees and draws from q: the
// same drafts as rows read on the host, for every kind of slot in one
// batch, levels and rounds on.
TEST_F(SideBySideDraftTest, DraftRowsSummarisedWhereTheyAreDraftWhatHostRowsDraft) {
  std::vector<DraftSettings> slots = {settings(0.0f, {1, 1, 1, 1}, 0),   // greedy chain
                                      settings(1.0f, {1, 1, 1, 1}, 1),   // sampled chain: race winners
                                      settings(0.8f, {2, 2, 1}, 2),      // sampled tree
                                      settings(0.0f, {3, 2, 1}, 3),      // greedy tree
                                      settings(1.0f, {3, 3, 3}, 4, PrunedTree{0.05f, 0.01f}),
                                      settings(0.7f, {2, 1, 1}, 5),      // cut by top-k and top-p below
                                      settings(1.0f, {1, 1, 1}, 6)};     // draws from q
  slots[5].sampling.top_k = 3;
  slots[5].sampling.top_p = 0.6f;
  slots[6].sample_drafts = true;
  const std::vector<int32_t> prompt = {5, 9, 2, 7};
  for (const bool edd : {false, true}) {
    auto on_host = edd ? make_edd_drafter(models::CausalLM::load(*edd_)) : make_draft_model_drafter(draft());
    auto summarised = edd ? make_edd_drafter(models::CausalLM::load(*edd_), {}, {}, LogitReads::kDeviceSummary)
                          : make_draft_model_drafter(draft(), {}, {}, LogitReads::kDeviceSummary);
    const int64_t hidden = edd ? models::CausalLM::load(*edd_)->config().hidden_size : 0;
    std::vector<int64_t> length(slots.size(), static_cast<int64_t>(prompt.size()));
    std::vector<DraftAsk> asks;
    for (uint64_t slot = 0; slot < slots.size(); ++slot) {
      on_host->start(slot, prompt, slots[slot]);
      summarised->start(slot, prompt, slots[slot]);
      asks.push_back({slot, 4});
    }
    size_t drafted = 0;
    for (int round = 0; round < 3; ++round) {
      const std::vector<DraftResult> expected = on_host->propose_batch(asks);
      const std::vector<DraftResult> got = summarised->propose_batch(asks);
      for (size_t slot = 0; slot < slots.size(); ++slot) {
        const std::string where =
            std::string(edd ? "EDD, " : "") + "round " + std::to_string(round) + ", slot " + std::to_string(slot);
        ASSERT_FALSE(expected[slot].error) << where;
        ASSERT_FALSE(got[slot].error) << where;
        const DraftTree& tree = got[slot].draft;
        EXPECT_EQ(tree.tokens, expected[slot].draft.tokens) << where;
        EXPECT_EQ(tree.parents, expected[slot].draft.parents) << where;
        EXPECT_EQ(tree.q, expected[slot].draft.q) << where;
        ASSERT_EQ(tree.confidence.size(), expected[slot].draft.confidence.size()) << where;
        for (size_t i = 0; i < tree.confidence.size(); ++i) {
          // A cut row's mass is summed where the logits are, in another order.
          EXPECT_NEAR(tree.confidence[i], expected[slot].draft.confidence[i], 1e-6) << where << ", node " << i;
        }
        drafted += expected[slot].draft.tokens.size();
        const bool first = length[slot] == static_cast<int64_t>(prompt.size());
        const int64_t rows = expected[slot].draft.tokens.empty() ? 1 : 2;
        const int64_t from = first ? 0 : length[slot] - 1;
        const Verdict verdict = first_node_and(expected[slot].draft, static_cast<int32_t>((round * 7 + slot) % 64),
                                               hidden, from, length[slot] + rows - 1 - from);
        length[slot] += rows;
        on_host->advance(slot, verdict);
        summarised->advance(slot, verdict);
      }
    }
    EXPECT_GT(drafted, 40u) << (edd ? "EDD" : "draft model");
  }
}

TEST_F(SideBySideDraftTest, ASharedForwardFailsItsBatchAndADrafterOneByOneFailsOnlyTheSlot) {
  auto drafter = make_draft_model_drafter(draft());
  drafter->start(0, {1, 2, 3}, settings(0.0f, {1, 1}, 0));
  // Slot 1 was never started: the side-by-side draft fails for both.
  const std::vector<DraftResult> shared = drafter->propose_batch({{0, 2}, {1, 2}});
  ASSERT_EQ(shared.size(), 2u);
  EXPECT_TRUE(shared[0].error);
  EXPECT_TRUE(shared[1].error);

  // A drafter without batches of its own: only the unknown slot fails.
  ::seed::testing::ForwardingDrafter one_by_one(make_draft_model_drafter(draft()));
  one_by_one.start(0, {1, 2, 3}, settings(0.0f, {1, 1}, 0));
  const std::vector<DraftResult> alone = one_by_one.propose_batch({{0, 2}, {1, 2}});
  ASSERT_EQ(alone.size(), 2u);
  EXPECT_FALSE(alone[0].error);
  EXPECT_EQ(alone[0].draft.tokens.size(), 2u);
  EXPECT_TRUE(alone[1].error);
}

// A draft-model drafter that records its batches: their sizes, the threads
// they ran on and those threads' team sizes.
class RecordingDrafter final : public Drafter {
 public:
  struct Batch {
    size_t size = 0;
    std::thread::id thread;
    int team = 0;
  };

  explicit RecordingDrafter(std::shared_ptr<const models::CausalLM> model)
      : inner_(make_draft_model_drafter(std::move(model))) {}
  void start(uint64_t slot, const std::vector<int32_t>& tokens, const DraftSettings& s) override {
    inner_->start(slot, tokens, s);
  }
  DraftTree propose(uint64_t slot, int max_depth) override { return inner_->propose(slot, max_depth); }
  std::vector<DraftResult> propose_batch(const std::vector<DraftAsk>& asks) override {
    std::vector<DraftResult> results = inner_->propose_batch(asks);  // runs ATen's parallel ops
    std::lock_guard<std::mutex> lock(mutex_);
    batches_.push_back({asks.size(), std::this_thread::get_id(), omp_get_max_threads()});
    return results;
  }
  void advance(uint64_t slot, const Verdict& verdict) override { inner_->advance(slot, verdict); }
  void finish(uint64_t slot) override { inner_->finish(slot); }

  std::vector<Batch> batches() {
    std::lock_guard<std::mutex> lock(mutex_);
    return batches_;
  }

 private:
  std::unique_ptr<Drafter> inner_;
  std::mutex mutex_;
  std::vector<Batch> batches_;
};

TEST_F(SideBySideDraftTest, SeedBatchDraftsARoundAsOneBatchOnTheTargetsThread) {
  const std::vector<GenRequest> requests = ::seed::testing::varied_requests(4, 0.0f, 24);
  auto recording = std::make_unique<RecordingDrafter>(draft());
  RecordingDrafter* drafter = recording.get();
  std::vector<std::unique_ptr<Drafter>> drafters;
  drafters.push_back(std::move(recording));
  RunSettings settings;
  settings.k_config = {1, 1, 1};
  settings.adaptive_draft_length = false;  // every round drafts
  auto engine = ScheduledEngine::seed("seed-batch",
                                      std::make_unique<ModelTarget>(models::CausalLM::load(pairs_->pair.target)),
                                      std::move(drafters), settings, Scheduler(SchedulePolicy::kBatch, 16), 1);
  const std::vector<Completion> out = engine->generate(requests);
  EngineOptions ar;
  ar.engine = EngineKind::parse("ar");
  ar.target = pairs_->pair.target;
  EXPECT_EQ(tokens_of(out), tokens_of(make_engine(ar)->generate(requests)));

  const std::vector<RecordingDrafter::Batch> batches = drafter->batches();
  ASSERT_GE(batches.size(), 2u);
  // The starts, then every round: never two batches for one forward.
  EXPECT_EQ(batches[0].size, requests.size());
  EXPECT_EQ(batches[1].size, requests.size());
  EXPECT_LE(batches.size(), static_cast<size_t>(engine->stats().target_forwards));
  // The starts draft on whichever thread takes them first (the drafter's,
  // woken while the target computes the prompts, or this one); every later
  // round on the target's (this) thread.
  for (size_t i = 1; i < batches.size(); ++i) EXPECT_EQ(batches[i].thread, std::this_thread::get_id()) << "batch " << i;
}

TEST_F(SideBySideDraftTest, WokenWorkDraftsOnTheDrafterThreadAndWorkDraftedHereOnAWiderTeam) {
  const int own = at::get_num_threads();
  at::set_num_threads(3);
  init_aten_thread();
  {
    VerifyQueue queue(Scheduler(SchedulePolicy::kBatch, 16));
    auto recording = std::make_unique<RecordingDrafter>(draft());
    RecordingDrafter* drafter = recording.get();
    std::vector<std::unique_ptr<Drafter>> drafters;
    drafters.push_back(std::move(recording));
    DrafterPool pool("test", std::move(drafters), {1, 1, 1}, std::nullopt, /*sample_drafts=*/false, /*threaded=*/true, /*draft_threads=*/1,
                     queue);
    const std::vector<GenRequest> requests = ::seed::testing::varied_requests(2, 0.0f, 8);
    std::vector<Sequence> seqs(requests.size());
    for (size_t i = 0; i < seqs.size(); ++i) {
      seqs[i].slot = i;
      seqs[i].request = &requests[i];
      seqs[i].prompt = requests[i].prompt_tokens;
    }
    pool.assign(seqs);
    pool.post({DraftTask::start(seqs[0], 3), DraftTask::start(seqs[1], 3)});
    EXPECT_FALSE(pool.idle());  // posted work waits to be woken or drafted here
    pool.wake();
    std::vector<Proposal> taken = queue.take();  // both, drafted together
    ASSERT_EQ(taken.size(), 2u);
    std::vector<DraftTask> advances;
    for (Proposal& p : taken) {
      ASSERT_EQ(p.draft.tokens.size(), 3u);
      advances.push_back(DraftTask::advance(*p.seq, first_node_and(p.draft, 1), 3));
    }
    pool.post(std::move(advances));
    EXPECT_TRUE(pool.draft_here(/*widen=*/true));
    EXPECT_FALSE(pool.draft_here(/*widen=*/true));  // nothing waits
    EXPECT_EQ(queue.take().size(), 2u);
    pool.post({DraftTask::finish(seqs[0]), DraftTask::finish(seqs[1])});
    pool.drain();
    EXPECT_TRUE(pool.idle());
    const std::vector<RecordingDrafter::Batch> batches = drafter->batches();
    ASSERT_EQ(batches.size(), 2u);
    EXPECT_NE(batches[0].thread, std::this_thread::get_id());
    EXPECT_EQ(batches[0].team, 1);
    EXPECT_EQ(batches[1].thread, std::this_thread::get_id());
    EXPECT_EQ(batches[1].team, 3 + 1);
  }
  at::set_num_threads(own);
}

}  // namespace
}  // namespace seed::spec
