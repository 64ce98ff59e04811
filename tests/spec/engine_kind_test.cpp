// EngineKind: names round-trip, unknown names fail naming the option, and
// each kind answers the capability questions as the engines need.
#include "spec/api/engine_kind.h"

#include <gtest/gtest.h>

#include "tests/throws_error.h"

namespace seed::spec {
namespace {

using ::seed::testing::throws_error;

struct Expected {
  const char* name;
  bool drafts, batched_verify, tree_drafts, drafter_pool;
};

// One row per kind, in kEngineKinds' order.
constexpr Expected kTable[] = {
    {"ar", false, false, false, false},   {"ar-batch", false, true, false, false},
    {"sd", true, false, false, false},    {"mcsd", true, false, true, false},
    {"seed", true, false, false, true},   {"seed-batch", true, true, false, true},
};

TEST(EngineKindTest, EveryKindAnswersAsItsRowSays) {
  ASSERT_EQ(std::size(kTable), kEngineKinds.size());
  for (size_t i = 0; i < kEngineKinds.size(); ++i) {
    const EngineKind kind = kEngineKinds[i];
    const Expected& e = kTable[i];
    SCOPED_TRACE(e.name);
    EXPECT_STREQ(kind.name(), e.name);
    EXPECT_EQ(kind.drafts(), e.drafts);
    EXPECT_EQ(kind.batched_verify(), e.batched_verify);
    EXPECT_EQ(kind.tree_drafts(), e.tree_drafts);
    EXPECT_EQ(kind.drafter_pool(), e.drafter_pool);
    EXPECT_EQ(EngineKind::parse(e.name), kind);
  }
}

TEST(EngineKindTest, UnknownNamesFailNamingTheOptionAndTheChoices) {
  EXPECT_TRUE(throws_error([] { EngineKind::parse("beam"); }, ErrorKind::kInvalidArgument,
                           {"--engine", "beam", "ar, ar-batch, sd, mcsd, seed, seed-batch"}));
  EXPECT_TRUE(throws_error([] { EngineKind::parse("SEED"); }, ErrorKind::kInvalidArgument, {"SEED"}));
  EXPECT_EQ(engine_kind_names(), "ar | ar-batch | sd | mcsd | seed | seed-batch");
}

}  // namespace
}  // namespace seed::spec
