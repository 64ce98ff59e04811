// The verifier's decisions are a function of their key alone: the same seed,
// request and position give the same verdict whatever ran before and on
// whichever thread, and each of them changes the decisions.
#include <gtest/gtest.h>

#include <cstdint>
#include <thread>
#include <vector>

#include "spec/api/verifier.h"
#include "tests/spec/verifier_toy_pair.h"

namespace seed::spec {
namespace {

// The verdict for one request of a (2,2) tree at position `base`.
Verdict verdict_of(uint64_t seed, uint64_t request, uint32_t base) {
  const DraftTree draft = sample_tree(kDraft, {2, 2}, kPrompt, base, request);
  return verify_against(kTarget, draft, kPrompt, {}, seed, request, base);
}

TEST(VerifierDeterminismTest, SameKeyGivesTheSameVerdictWhateverRanBefore) {
  constexpr uint64_t kRequests = 200;
  std::vector<Verdict> forward;
  for (uint64_t request = 0; request < kRequests; ++request) forward.push_back(verdict_of(kSeed, request, 7));
  // Reverse order, each call interleaved with an unrelated one.
  for (uint64_t request = kRequests; request-- > 0;) {
    verdict_of(kSeed + 1, request + kRequests, 3);
    expect_same(verdict_of(kSeed, request, 7), forward[request], request);
  }
  // Another thread: no hidden state.
  std::vector<Verdict> threaded(kRequests);
  std::thread worker([&threaded] {
    for (uint64_t request = 0; request < kRequests; ++request) {
      threaded[request] = verdict_of(kSeed, request, 7);
    }
  });
  worker.join();
  for (uint64_t request = 0; request < kRequests; ++request) {
    expect_same(threaded[request], forward[request], request);
  }
}

TEST(VerifierDeterminismTest, SeedRequestAndPositionEachChangeTheDecisions) {
  constexpr uint64_t kRequests = 200;
  int differ_by_seed = 0;
  int differ_by_position = 0;
  int differ_by_request = 0;
  for (uint64_t request = 0; request < kRequests; ++request) {
    const Verdict verdict = verdict_of(kSeed, request, 7);
    differ_by_seed += verdict_of(kSeed + 1, request, 7).tokens != verdict.tokens;
    differ_by_position += verdict_of(kSeed, request, 8).tokens != verdict.tokens;
    differ_by_request += verdict_of(kSeed, request + kRequests, 7).tokens != verdict.tokens;
  }
  EXPECT_GT(differ_by_seed, 0);
  EXPECT_GT(differ_by_position, 0);
  EXPECT_GT(differ_by_request, 0);
}

}  // namespace
}  // namespace seed::spec
