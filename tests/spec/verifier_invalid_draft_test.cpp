// Every malformed draft or target the verifier rejects, each with an error
// that names what is wrong.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "models/base/error.h"
#include "spec/api/verifier.h"
#include "tests/spec/verifier_toy_pair.h"
#include "tests/throws_error.h"

namespace seed::spec {
namespace {

using ::seed::testing::throws_error;

class VerifierInvalidDraftTest : public ::testing::Test {
 protected:
  // A valid sampled chain of 2; each test breaks one thing.
  VerifierInvalidDraftTest() : draft_(sample_tree(kDraft, {1, 1}, kPrompt, 0, 0)) {
    logits_ = context_logits(kTarget, draft_, kPrompt);
  }
  ::testing::AssertionResult rejected(const std::vector<std::string>& needles) {
    return throws_error(
        [&] {
          TargetRows target(logits_.data(), contexts_, vocab_, SamplingParams{});
          verify(VerifyRequest{&draft_, &target});
        },
        ErrorKind::kInvalidArgument, needles);
  }

  DraftTree draft_;
  std::vector<float> logits_;
  int64_t contexts_ = 3;
  int64_t vocab_ = kVocab;
};

TEST_F(VerifierInvalidDraftTest, TheUnbrokenDraftIsAccepted) {
  TargetRows target(logits_.data(), 3, kVocab, SamplingParams{});
  EXPECT_NO_THROW(verify(VerifyRequest{&draft_, &target}));
}

TEST_F(VerifierInvalidDraftTest, NullDraftOrTargetIsRejected) {
  VerifyRequest request;
  EXPECT_TRUE(throws_error([&] { verify(request); }, ErrorKind::kInvalidArgument, {"draft is null"}));
  request.draft = &draft_;
  EXPECT_TRUE(throws_error([&] { verify(request); }, ErrorKind::kInvalidArgument, {"target is null"}));
}

TEST_F(VerifierInvalidDraftTest, NonPositiveVocabIsRejected) {
  vocab_ = 0;
  EXPECT_TRUE(rejected({"vocab"}));
}

TEST_F(VerifierInvalidDraftTest, TargetRowsThatAreNotOnePerContextAreRejected) {
  contexts_ = 2;
  EXPECT_TRUE(rejected({"target has 2 rows", "n + 1"}));
}

TEST_F(VerifierInvalidDraftTest, TokensAndParentsOfDifferentLengthsAreRejected) {
  draft_.parents.push_back(1);
  EXPECT_TRUE(rejected({"2 tokens but 3 parents"}));
}

TEST_F(VerifierInvalidDraftTest, ParentsOutOfTopologicalOrderAreRejected) {
  draft_.parents[1] = 1;
  EXPECT_TRUE(rejected({"node 1 has parent 1", "topological"}));
  draft_.parents[1] = -2;
  EXPECT_TRUE(rejected({"node 1 has parent -2"}));
}

TEST_F(VerifierInvalidDraftTest, TokensOutsideTheVocabAreRejected) {
  draft_.tokens[1] = kVocab;
  EXPECT_TRUE(rejected({"node 1 proposes token 6", "vocab"}));
  draft_.tokens[1] = -1;
  EXPECT_TRUE(rejected({"node 1 proposes token -1"}));
}

TEST_F(VerifierInvalidDraftTest, DraftDistributionsOfTheWrongSizeAreRejected) {
  draft_.q.resize(2);
  EXPECT_TRUE(rejected({"q has 2 rows", "n + 1 = 3"}));
  draft_.q.clear();
  EXPECT_TRUE(rejected({"q has 0 rows"}));
}

TEST_F(VerifierInvalidDraftTest, MalformedDraftRowsAreRejected) {
  draft_.q[2].ids.push_back(0);
  EXPECT_TRUE(rejected({"q row 2 has", "ids but"}));
  draft_.q[2].probs.push_back(0.5f);
  draft_.q[2].ids.back() = kVocab;
  EXPECT_TRUE(rejected({"q row 2 names token 6", "vocab"}));
}

TEST_F(VerifierInvalidDraftTest, DraftDistributionsOnADeterministicDraftAreRejected) {
  draft_.deterministic = true;
  EXPECT_TRUE(rejected({"deterministic", "q has 3 rows"}));
}

TEST_F(VerifierInvalidDraftTest, TokenTheDraftCouldNotHaveSampledIsRejected) {
  const int32_t other = (draft_.tokens[1] + 1) % kVocab;
  draft_.q[1] = {{other}, {1.0f}};  // context 1's row without node 1's token
  EXPECT_TRUE(rejected({"node 1 proposes token", "context 1 gives it 0"}));
}

}  // namespace
}  // namespace seed::spec
