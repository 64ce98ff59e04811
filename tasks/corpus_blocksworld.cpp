// The Blocksworld kinds of the corpus: next_action, evaluate_action and
// plan, over random instances and legal plan prefixes, labelled by
// Blocksworld's optimal planner.
#include "tasks/corpus_generators.h"

#include <algorithm>
#include <optional>
#include <string>

#include "tasks/blocksworld.h"
#include "tasks/corpus_formats.h"

namespace seed::tasks {
namespace {

// Blocksworld plan prefixes take an optimal action this often, else a random
// legal one, so that searches' off-path states are covered too.
constexpr uint64_t kPrefixOptimalPercent = 75;
// next_action completions are an optimal action this often, else any legal one.
constexpr uint64_t kNextActionOptimalPercent = 75;

// A Blocksworld instance and a legal plan prefix that does not reach the goal.
struct BlocksDraw {
  BlocksInstance instance;
  BlocksState state;  // after the prefix
  std::string plan;   // the prefix, one action per line, each ending in '\n'
};

BlocksInstance draw_instance(const CorpusConfig& config, std::mt19937_64& rng) {
  return blocks_random_instance(
      rng, static_cast<int>(draw_between(rng, config.blocks_min, config.blocks_max)));
}

BlocksDraw draw_prefix(const CorpusConfig& config, std::mt19937_64& rng) {
  BlocksDraw draw{draw_instance(config, rng), BlocksState{}, ""};
  draw.state = draw.instance.start;
  const std::optional<std::vector<BlocksAction>> plan =
      blocks_optimal_plan(draw.state, draw.instance.goal);
  SEED_CHECK(plan && !plan->empty(), kInternal) << "corpus: a random instance has no plan";
  const uint64_t length = draw_below(rng, plan->size());  // 0..|plan|-1 actions
  for (uint64_t k = 0; k < length; ++k) {
    const BlocksAction action = draw_chance(rng, kPrefixOptimalPercent, 100)
                                    ? pick(rng, blocks_optimal_actions(draw.state, draw.instance.goal))
                                    : pick(rng, blocks_valid_actions(draw.state));
    const BlocksState next = blocks_apply(draw.state, action);
    if (blocks_goal_holds(next, draw.instance.goal)) break;  // leave something to do
    draw.state = next;
    draw.plan += blocks_action_text(action, draw.instance.names) + "\n";
  }
  return draw;
}

CorpusExample blocks_example(std::string kind, std::string prompt, std::string completion) {
  return {"blocksworld", std::move(kind), std::move(prompt), std::move(completion)};
}

}  // namespace

std::vector<CorpusExample> blocks_next_action(const CorpusConfig& config) {
  std::mt19937_64 rng = engine(config, Stream::kNextAction);
  std::vector<CorpusExample> examples;
  for (int i = 0; i < config.blocksworld_next_action; ++i) {
    const BlocksDraw draw = draw_prefix(config, rng);
    const BlocksAction action = draw_chance(rng, kNextActionOptimalPercent, 100)
                                    ? pick(rng, blocks_optimal_actions(draw.state, draw.instance.goal))
                                    : pick(rng, blocks_valid_actions(draw.state));
    examples.push_back(blocks_example(
        "next_action",
        render_prompt(kBlocksworldNextActionPrompt,
                      {{"statement", blocks_statement(draw.instance)}, {"plan", draw.plan}}),
        blocks_action_text(action, draw.instance.names) + "\n"));
  }
  return examples;
}

std::vector<CorpusExample> blocks_evaluate_action(const CorpusConfig& config) {
  std::mt19937_64 rng = engine(config, Stream::kEvaluateAction);
  std::vector<CorpusExample> examples;
  for (int i = 0; i < config.blocksworld_evaluate_action; ++i) {
    const bool want_good = i % 2 == 0;
    for (int draw_no = 0;; ++draw_no) {
      SEED_CHECK(draw_no < kMaxDraws, kInternal) << "corpus: no state with a bad action found";
      const BlocksDraw draw = draw_prefix(config, rng);
      const std::vector<BlocksAction> optimal =
          blocks_optimal_actions(draw.state, draw.instance.goal);
      std::vector<BlocksAction> candidates = optimal;
      if (!want_good) {
        candidates.clear();
        for (const BlocksAction& a : blocks_valid_actions(draw.state)) {
          if (std::find(optimal.begin(), optimal.end(), a) == optimal.end()) candidates.push_back(a);
        }
      }
      if (candidates.empty()) continue;
      const BlocksAction& action = pick(rng, candidates);
      examples.push_back(blocks_example(
          "evaluate_action",
          render_prompt(kBlocksworldEvaluatePrompt,
                        {{"statement", blocks_statement(draw.instance)},
                         {"plan", draw.plan},
                         {"action", blocks_action_text(action, draw.instance.names)}}),
          want_good ? "good\n" : "bad\n"));
      break;
    }
  }
  return examples;
}

std::vector<CorpusExample> blocks_plan(const CorpusConfig& config) {
  std::mt19937_64 rng = engine(config, Stream::kPlan);
  std::vector<CorpusExample> examples;
  for (int i = 0; i < config.blocksworld_plan; ++i) {
    const BlocksInstance instance = draw_instance(config, rng);
    const std::optional<std::vector<BlocksAction>> plan =
        blocks_optimal_plan(instance.start, instance.goal);
    SEED_CHECK(plan.has_value(), kInternal) << "corpus: a random instance has no plan";
    std::string completion;
    for (const BlocksAction& a : *plan) completion += blocks_action_text(a, instance.names) + "\n";
    completion += std::string(kBlocksworldPlanEnd) + "\n";
    examples.push_back(blocks_example(
        "plan", render_prompt(kBlocksworldPlanPrompt, {{"statement", blocks_statement(instance)}}),
        std::move(completion)));
  }
  return examples;
}

}  // namespace seed::tasks
