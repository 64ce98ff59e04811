// How the engines end requests they cannot serve: a full context ends a
// request at the same token in every engine, a prompt longer than the
// context and malformed requests are errors naming the request and field,
// and factory errors name the option.
#include <gtest/gtest.h>

#include "tests/spec/engine_test_fixture.h"
#include "tests/throws_error.h"

namespace seed::spec {
namespace {

using ::seed::testing::throws_error;
using ::seed::testing::tokens_of;

TEST_F(EngineTest, AFullContextEndsTheRequestAtTheSameTokenInEveryEngine) {
  // Context 96, prompt 90: positions 90..95 can be fed, and one more token is
  // sampled after the last of them: 7 tokens.
  std::vector<GenRequest> batch = requests(0.0f, 50);
  batch[2].prompt_tokens.assign(90, 4);
  batch[4].prompt_tokens.assign(97, 4);  // longer than the context
  const std::vector<Completion> reference = engine("ar")->generate(batch);
  EXPECT_EQ(reference[2].finish, FinishReason::kContext);
  EXPECT_EQ(reference[2].tokens.size(), 7u);
  EXPECT_EQ(reference[4].finish, FinishReason::kError);
  EXPECT_NE(reference[4].error.find("request 4: prompt of 97 tokens"), std::string::npos) << reference[4].error;
  EXPECT_EQ(reference[0].finish, FinishReason::kLength);
  for (const std::string name : {"ar-batch", "sd", "mcsd", "seed", "seed-batch"}) {
    const std::vector<Completion> out = engine(name)->generate(batch);
    EXPECT_EQ(tokens_of(out), tokens_of(reference)) << name;
    EXPECT_EQ(out[2].finish, FinishReason::kContext) << name;
    EXPECT_EQ(out[4].finish, FinishReason::kError) << name;
  }
}

TEST_F(EngineTest, MalformedRequestsAreErrorsNamingTheRequestAndField) {
  auto e = engine("seed");
  std::vector<GenRequest> batch = requests(1.0f);
  batch[1].max_new_tokens = -1;
  EXPECT_TRUE(throws_error([&] { e->generate(batch); }, ErrorKind::kInvalidArgument, {"request 1", "max_new_tokens"}));
  batch = requests(1.0f);
  batch[2].prompt_tokens = {3, 64};
  EXPECT_TRUE(throws_error([&] { e->generate(batch); }, ErrorKind::kInvalidArgument, {"request 2", "vocabulary"}));
  batch = requests(1.0f);
  batch[0].prompt_tokens.clear();
  batch[0].prompt = "4 9 10 13";
  EXPECT_TRUE(throws_error([&] { e->generate(batch); }, ErrorKind::kInvalidArgument, {"request 0", "tokenizer"}));
  batch = requests(1.0f);
  batch[3].draft_length = -1;
  EXPECT_TRUE(throws_error([&] { e->generate(batch); }, ErrorKind::kInvalidArgument, {"request 3", "draft_length"}));
  batch[3].draft_length = kMaxDraftLength + 1;
  EXPECT_TRUE(throws_error([&] { e->generate(batch); }, ErrorKind::kInvalidArgument, {"request 3", "draft_length"}));
  batch = requests(1.0f);
  batch[5].sampling.top_p = 1.5f;
  EXPECT_TRUE(throws_error([&] { e->generate(batch); }, ErrorKind::kInvalidArgument, {"request 5", "top_p"}));
  // Nothing was lost: the engine still serves a good batch.
  EXPECT_EQ(e->generate(requests(1.0f)).size(), 6u);
}

TEST_F(EngineTest, FactoryErrorsNameTheOption) {
  EngineOptions o;
  o.target = pair_->target;
  o.engine = EngineKind::kSeed;
  EXPECT_TRUE(throws_error([&] { make_engine(o); }, ErrorKind::kInvalidArgument, {"--draft"}));
  o.draft = small_->draft;
  EXPECT_TRUE(throws_error([&] { make_engine(o); }, ErrorKind::kInvalidArgument, {"--draft", "vocabulary"}));
  o.draft = pair_->draft;
  o.k_config = {2, 0};
  EXPECT_TRUE(throws_error([&] { make_engine(o); }, ErrorKind::kInvalidArgument, {"--k-config"}));
}

}  // namespace
}  // namespace seed::spec
