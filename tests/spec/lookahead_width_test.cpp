// LookaheadEngine drafting several alternatives per step (width): the first
// that matches is committed, a greedy request drafts one, a sampled one
// drafts its first greedily and samples the rest.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/spec/lookahead_scenario.h"

namespace seed::spec {
namespace {

TEST(LookaheadEngine, WidthTriesEachAlternativeAndCommitsTheFirstThatMatches) {
  const auto steps = numbered_steps(6);
  Scenario scenario;
  scenario.target_steps = steps;
  // The first alternative is always wrong, the second always right.
  scenario.draft_scripts = {std::vector<std::string>(6, "XX\n"), steps};
  scenario.lookahead.gamma = 2;
  scenario.temperature = 1;
  const Outcome one = run(scenario);
  scenario.lookahead.width = 2;
  const Outcome two = run(scenario);
  EXPECT_EQ(one.completion.text, target_alone(steps));
  EXPECT_EQ(two.completion.text, target_alone(steps));
  EXPECT_EQ(one.steps.accepted_steps, 0);
  // Width 2: rounds 1 and 2 accept two drafted steps each and commit the
  // target's bonus step; round 3 drafts at EOS and commits the target's EOS.
  EXPECT_EQ(two.steps.accepted_steps, 4);
  EXPECT_EQ(two.steps.rounds, 3);
}

TEST(LookaheadEngine, AGreedyRequestDraftsOneAlternative) {
  const auto steps = numbered_steps(4);
  Scenario scenario;
  scenario.target_steps = steps;
  scenario.draft_scripts = {std::vector<std::string>(4, "XX\n"), steps};
  scenario.lookahead.gamma = 2;
  scenario.lookahead.width = 2;
  const Outcome o = run(scenario);  // temperature 0: the alternatives would be one text
  EXPECT_EQ(o.completion.text, target_alone(steps));
  EXPECT_EQ(o.steps.accepted_steps, 0);
}

TEST(LookaheadEngine, ASampledRequestDraftsItsFirstAlternativeGreedilyAndSamplesTheRest) {
  const auto steps = numbered_steps(4);
  Scenario scenario;
  scenario.target_steps = steps;
  scenario.draft_scripts = {steps, std::vector<std::string>(4, "XX\n")};
  scenario.lookahead.gamma = 2;
  scenario.lookahead.width = 2;
  scenario.temperature = 0.7f;
  const Outcome o = run(scenario);
  ASSERT_FALSE(o.draft_temperatures.empty());
  ASSERT_EQ(o.draft_temperatures.size() % 2, 0u);
  for (size_t i = 0; i < o.draft_temperatures.size(); i += 2) {
    EXPECT_EQ(o.draft_temperatures[i], 0.0f) << "draft request " << i;
    EXPECT_EQ(o.draft_temperatures[i + 1], 0.7f) << "draft request " << i + 1;
  }
  for (const float t : o.target_temperatures) EXPECT_EQ(t, 0.7f);
}

}  // namespace
}  // namespace seed::spec
