// The engine one problem's search sees in `seed run`: its stats are its own
// requests' alone, however many problems share the engine, and the end of
// its group reaches the shared engine's drafters.
#include "launch/problem_engine.h"

#include <gtest/gtest.h>

#include "tests/search/scripted_engine.h"

namespace seed::launch {
namespace {

spec::GenRequest request(const std::string& prompt, uint64_t group) {
  spec::GenRequest r;
  r.prompt = prompt;
  r.group = group;
  return r;
}

TEST(ProblemEngine, CountsItsOwnRequestsAndEndsItsGroupOnTheSharedEngine) {
  testing::ScriptedEngine shared({{"a", {"xyz"}}, {"b", {"pq"}}});
  ProblemEngine first(shared), second(shared);
  first.generate({request("a", 1), request("a", 1)});
  second.generate({request("b", 2)});
  first.generate({request("b", 1)});

  EXPECT_EQ(first.stats().requests, 3);
  EXPECT_EQ(first.stats().generated_tokens, 3 + 3 + 2);
  EXPECT_EQ(second.stats().requests, 1);
  EXPECT_EQ(second.stats().generated_tokens, 2);
  EXPECT_EQ(shared.stats().requests, 4);
  second.reset_stats();
  EXPECT_EQ(second.stats().requests, 0);
  EXPECT_EQ(first.stats().requests, 3);

  second.end_group(2);
  first.end_group(1);
  EXPECT_EQ(shared.ended(), (std::vector<testing::ScriptedEngine::Ended>{{2, 3}, {1, 3}}));
}

}  // namespace
}  // namespace seed::launch
