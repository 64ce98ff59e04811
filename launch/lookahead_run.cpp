#include "launch/lookahead_run.h"

#include "models/base/error.h"
#include "models/tokenizer.h"
#include "tasks/step_checkers.h"

namespace seed::launch {
namespace {

// A task's step checker as a step verifier.
class TaskStepVerifier : public spec::StepVerifier {
 public:
  explicit TaskStepVerifier(std::string name) : name_(std::move(name)), checker_(tasks::make_step_checker(name_)) {}
  bool same(const std::string& target_step, const std::string& draft_step) const override {
    return checker_(target_step, draft_step);
  }
  std::string name() const override { return name_; }

 private:
  std::string name_;
  tasks::StepChecker checker_;
};

std::unique_ptr<spec::StepVerifier> make_verifier(const std::string& name) {
  if (name == "exact" || name == "normalized") return spec::make_step_verifier(name);
  for (const std::string& checker : tasks::step_checker_names()) {
    if (name == checker) return std::make_unique<TaskStepVerifier>(name);
  }
  SEED_FAIL(kInvalidArgument) << "--step-verifier: unknown verifier '" << name
                              << "' (exact | normalized | a task's step checker: game24 | blocksworld)";
}

}  // namespace

std::unique_ptr<spec::Engine> with_lookahead(std::unique_ptr<spec::Engine> target, const spec::EngineOptions& engine,
                                             const LookaheadOptions& lookahead) {
  SEED_CHECK(lookahead.gamma >= 1, kInvalidArgument) << "--lookahead: " << lookahead.gamma << " steps < 1";
  SEED_CHECK(!engine.draft.empty(), kInvalidArgument)
      << "--lookahead: needs --draft, the model that drafts steps";
  // The draft model writes steps on its own (autoregressively, in this
  // process): it is the "target" of its own engine.
  spec::EngineOptions draft = engine;
  draft.engine = spec::EngineKind::parse("ar-batch");
  draft.target = engine.draft;
  const spec::RunSettings settings = spec::model_run_settings(engine.target, engine.chat_system);
  spec::LookaheadSettings steps;
  steps.gamma = lookahead.gamma;
  steps.adaptive = lookahead.adaptive;
  steps.delimiter = lookahead.delimiter;
  return std::make_unique<spec::LookaheadEngine>(spec::make_engine(draft), std::move(target), settings, steps,
                                                 make_verifier(lookahead.verifier));
}

void parse_lookahead(const std::string& value, LookaheadOptions& lookahead) {
  if (value == "auto") {
    lookahead.adaptive = true;
    lookahead.gamma = 1;
    return;
  }
  size_t end = 0;
  int gamma = 0;
  try {
    gamma = std::stoi(value, &end);
  } catch (const std::exception&) {
    end = 0;
  }
  SEED_CHECK(end == value.size() && end > 0 && gamma >= 1, kInvalidArgument)
      << "--lookahead: '" << value << "' is neither a number of steps >= 1 nor auto";
  lookahead.gamma = gamma;
}

nlohmann::json lookahead_json(const LookaheadOptions& lookahead) {
  return {{"gamma", lookahead.adaptive ? nlohmann::json("auto") : nlohmann::json(lookahead.gamma)},
          {"verifier", lookahead.verifier},
          {"delimiter", lookahead.delimiter}};
}

nlohmann::json step_stats_json(const spec::StepStats& steps) {
  return {{"rounds", steps.rounds},
          {"drafted_steps", steps.drafted_steps},
          {"accepted_steps", steps.accepted_steps},
          {"step_acceptance", steps.acceptance()},
          {"steps_per_round", steps.steps_per_round()},
          {"mean_gamma", steps.mean_gamma()}};
}

}  // namespace seed::launch
