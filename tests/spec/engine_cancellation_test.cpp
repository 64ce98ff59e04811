// Cancelling requests in every engine: what completed is unchanged, the rest
// complete as cancelled, and the target holds nothing afterwards.
#include <gtest/gtest.h>

#include "tests/spec/engine_test_fixture.h"

namespace seed::spec {
namespace {

using ::seed::testing::tokens_of;

// The first request to complete cancels the others: they complete with
// kCancelled, what completed is unchanged, and the target holds nothing
// afterwards.
TEST_F(EngineTest, CancelledRequestsStopAndFreeWhatTheyHeld) {
  for (const std::string name : {"ar", "ar-batch", "sd", "mcsd", "seed", "seed-batch"}) {
    auto e = engine(name);
    const auto reference = tokens_of(engine(name)->generate(requests(1.0f)));
    std::vector<size_t> order;
    const auto cancel_the_rest = [&](size_t index, const Completion&) {
      order.push_back(index);
      std::vector<size_t> rest;
      for (size_t i = 0; i < 6; ++i) {
        if (i != index) rest.push_back(i);
      }
      return rest;
    };
    const std::vector<Completion> out = e->generate(requests(1.0f), cancel_the_rest);
    ASSERT_EQ(order.size(), 1u) << name << ": cancelled requests are not reported";
    for (size_t i = 0; i < out.size(); ++i) {
      if (i == order[0]) {
        EXPECT_EQ(out[i].tokens, reference[i]) << name;
        EXPECT_NE(out[i].finish, FinishReason::kCancelled) << name;
      } else {
        EXPECT_EQ(out[i].finish, FinishReason::kCancelled) << name << " request " << i;
      }
    }
    EXPECT_EQ(e->stats().prefill.kv_live_bytes, 0) << name;
    EXPECT_EQ(tokens_of(e->generate(requests(1.0f))), reference) << name << ": the engine works on afterwards";
  }
}

}  // namespace
}  // namespace seed::spec
