// A target split over a tensor-parallel group of 2, driven by its leader,
// decides exactly what the whole model's target decides, round after round
// (so the ranks' caches stay in step), and the other rank's serve loop ends
// when the leader's handle goes.
#include "parallel/tp_target.h"

#include <gtest/gtest.h>

#include <memory>

#include "models/causal_lm.h"
#include "parallel/mpi_communicator.h"
#include "spec/engine/model_target.h"
#include "tests/models/tiny_models.h"
#include "tests/parallel/mpi_world.h"

namespace seed::parallel {
namespace {

using testing::mpi_world;

constexpr int kTp = 2;
constexpr uint64_t kModelSeed = 5;
constexpr int kRounds = 6;

spec::DraftTree chain_draft(int round, int64_t vocab) {
  spec::DraftTree d;
  for (int i = 0; i < 3; ++i) {
    d.tokens.push_back(static_cast<int32_t>((7 * round + 3 * i + 1) % vocab));
    d.parents.push_back(i - 1);
  }
  d.deterministic = true;
  return d;
}

spec::DraftTree tree_draft(int round, int64_t vocab) {
  spec::DraftTree d;
  d.tokens = {static_cast<int32_t>(round % vocab), static_cast<int32_t>((round + 9) % vocab), 4};
  d.parents = {-1, -1, 0};
  d.deterministic = true;
  return d;
}

TEST(TpTarget, LeadersVerdictsEqualTheWholeModelsTarget) {
  ASSERT_GE(mpi_world().world_size(), kTp) << "run under mpirun -np 2 or more";
  for (const std::string& variant : {std::string("llama"), std::string("mistral"), std::string("qwen3")}) {
    SCOPED_TRACE(variant);
    const models::ModelConfig config = models::testing::tiny_config(variant);
    std::unique_ptr<Communicator> group = make_mpi_communicator(0, kTp);
    if (!group) continue;
    models::LoadOptions options;
    options.tp_group = group.get();
    auto local = std::make_unique<spec::ModelTarget>(models::CausalLM::random(config, kModelSeed, options));
    if (group->rank() != 0) {
      serve_tp_target(*local, *group, /*leader_rank=*/0);
      continue;
    }
    spec::ModelTarget whole(models::CausalLM::random(config, kModelSeed));
    TpLeaderTarget leader(std::move(local), group.get());
    EXPECT_EQ(leader.vocab_size(), whole.vocab_size());
    spec::TargetSettings sampled;  // temperature 1: accepts and resamples draw from p
    sampled.seed = 99;
    spec::TargetSettings greedy;
    greedy.sampling.temperature = 0;
    for (spec::Target* target : {static_cast<spec::Target*>(&leader), static_cast<spec::Target*>(&whole)}) {
      target->start(1, {1, 5, 9, 2}, sampled);
      target->start(2, {3, 14, 15}, greedy);
    }
    for (int round = 0; round < kRounds; ++round) {
      const spec::DraftTree chain = chain_draft(round, config.vocab_size);
      const spec::DraftTree tree = tree_draft(round, config.vocab_size);
      const std::vector<spec::VerifyItem> items = {{1, &chain}, {2, &tree}};
      const std::vector<spec::Verdict> got = leader.verify(items), expected = whole.verify(items);
      ASSERT_EQ(got.size(), expected.size());
      for (size_t i = 0; i < got.size(); ++i) {
        EXPECT_EQ(got[i].accepted, expected[i].accepted) << "round " << round << " item " << i;
        EXPECT_EQ(got[i].tokens, expected[i].tokens) << "round " << round << " item " << i;
      }
      EXPECT_EQ(leader.room(1), whole.room(1));
    }
    leader.finish(1);
    leader.finish(2);
  }  // the leader's destructor ends rank 1's serve loop
}

}  // namespace
}  // namespace seed::parallel
