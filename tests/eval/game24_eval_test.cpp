// evaluate_game24 on the shipped target: the per-state value judgments it
// returns (`seed eval game24 --value-out`) are the ones its counters count,
// and its progress reports count up to each phase's total.
#include "eval/game24_eval.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "spec/engine/engine_factory.h"

namespace seed::eval {
namespace {

TEST(Game24EvalTest, ValueJudgmentsAreTheStatesCountedWithTheSolversLabels) {
  spec::EngineOptions ar;
  ar.engine = spec::EngineKind::kAr;
  ar.target = std::string(SEED_ZOO_DIR) + "/tiny-target";
  const std::unique_ptr<spec::Engine> engine = spec::make_engine(ar);
  Game24EvalOptions options;
  options.max_value_states = 12;
  std::map<std::string, std::vector<std::pair<int64_t, int64_t>>> progress;
  options.on_progress = [&](const char* phase, int64_t done, int64_t total) {
    progress[phase].emplace_back(done, total);
  };
  const std::vector<tasks::Numbers> puzzles = {tasks::parse_puzzle("1 1 4 6"), tasks::parse_puzzle("4 9 10 13")};
  const Game24EvalResult result = evaluate_game24(*engine, puzzles, options);

  ASSERT_EQ(result.value_states, 12);
  ASSERT_EQ(result.value_judgments.size(), 12u);
  EXPECT_EQ(result.value_judgments[0].state, "1 1 4 6");  // puzzles first, then their children
  tasks::Game24Solver solver;
  int64_t agree = 0, unparsed = 0;
  for (const Game24ValueJudgment& j : result.value_judgments) {
    const std::optional<tasks::Numbers> state = tasks::parse_numbers(j.state);
    ASSERT_TRUE(state.has_value()) << j.state;
    EXPECT_EQ(j.solver, solver.label(*state)) << j.state;
    agree += j.model == tasks::game24_label_name(j.solver);
    unparsed += j.model != "sure" && j.model != "likely" && j.model != "impossible";
  }
  EXPECT_EQ(agree, result.value_agree);
  EXPECT_EQ(unparsed, result.value_unparsed);

  const std::vector<std::pair<int64_t, int64_t>> puzzles_done = {{1, 2}, {2, 2}};
  EXPECT_EQ(progress["puzzles"], puzzles_done);
  ASSERT_EQ(progress["value states"].size(), 12u);
  for (int64_t i = 0; i < 12; ++i) EXPECT_EQ(progress["value states"][i], std::make_pair(i + 1, int64_t{12}));
}

}  // namespace
}  // namespace seed::eval
