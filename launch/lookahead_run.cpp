#include "launch/lookahead_run.h"

#include <algorithm>
#include <optional>

#include "launch/model_option.h"
#include "launch/option_checks.h"
#include "models/base/error.h"
#include "models/tokenizer.h"
#include "spec/lookahead/hidden_state_verifier.h"
#include "spec/lookahead/judge_verifier.h"
#include "tasks/prompt_template.h"
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

// The judge: the target's engine (or --judge-model's) answers the task's
// judge_prompt.
std::unique_ptr<spec::StepVerifier> make_judge(spec::Engine& target, const spec::EngineOptions& engine,
                                               const LookaheadOptions& lookahead) {
  SEED_CHECK(!lookahead.judge_prompt.empty(), kInvalidArgument)
      << "--step-verifier judge: the task has no question for the judge; add lookahead.judge_prompt to its "
         "task.json, a template over {s1} (the target's step) and {s2} (the drafted step)";
  const std::string prompt = lookahead.judge_prompt;
  auto render = [prompt](const std::string& s1, const std::string& s2) {
    return tasks::fill_template(
        prompt,
        [&](const std::string& field) -> std::optional<std::string> {
          if (field == "s1") return s1;
          if (field == "s2") return s2;
          return std::nullopt;
        },
        "lookahead.judge_prompt");
  };
  std::unique_ptr<spec::Engine> own;
  if (!lookahead.judge_model.empty()) {
    own = spec::make_engine(spec::autoregressive_options(engine, lookahead.judge_model));
  }
  return std::make_unique<spec::JudgeVerifier>(&target, render, std::move(own));
}

bool is_step_checker(const std::string& name) {
  const std::vector<std::string>& checkers = tasks::step_checker_names();
  return std::find(checkers.begin(), checkers.end(), name) != checkers.end();
}

}  // namespace

spec::LookaheadSettings lookahead_settings(const LookaheadOptions& lookahead) {
  spec::LookaheadSettings steps;
  steps.gamma = lookahead.gamma;
  steps.adaptive = lookahead.adaptive;
  steps.delimiter = lookahead.delimiter;
  steps.width = lookahead.width;
  steps.async = lookahead.async;
  return steps;
}

spec::StepVerifierMaker step_verifier_maker(const LookaheadOptions& lookahead) {
  const std::string& name = lookahead.verifier;
  if (name == "exact" || name == "normalized") {
    return [name](spec::Engine&, const spec::EngineOptions&) { return spec::make_step_verifier(name); };
  }
  if (name == "judge") {
    if (!lookahead.judge_model.empty()) check_model_folder(lookahead.judge_model, "--judge-model");
    return [lookahead](spec::Engine& target, const spec::EngineOptions& engine) {
      return make_judge(target, engine, lookahead);
    };
  }
  std::optional<double> threshold;
  if (tasks::parse_hidden_verifier(name, "--step-verifier", &threshold)) {
    return [threshold](spec::Engine&, const spec::EngineOptions& engine) -> std::unique_ptr<spec::StepVerifier> {
      // The target model, whole, in this process: the verifier reads steps
      // with it. The engine's own where it runs here (loaded_models).
      std::shared_ptr<models::CausalLM> model =
          spec::load_model(engine, engine.target, spec::load_options(engine), "--target");
      return std::make_unique<spec::HiddenStateVerifier>(
          std::move(model), models::load_tokenizer(engine.target),
          threshold.value_or(spec::HiddenStateVerifier::kDefaultThreshold));
    };
  }
  SEED_CHECK(is_step_checker(name), kInvalidArgument)
      << "--step-verifier: unknown verifier '" << name << "' (" << tasks::step_verifier_list() << ")";
  return [name](spec::Engine&, const spec::EngineOptions&) { return std::make_unique<TaskStepVerifier>(name); };
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

void add_lookahead_shape_options(CLI::App* command, LookaheadOptions* lookahead) {
  command->add_option("--lookahead-width", lookahead->width,
                      "--lookahead: drafted alternatives per step (sampled requests; greedy ones draft one)")
      ->check(positive_integer())
      ->capture_default_str();
  command->add_flag("--lookahead-async", lookahead->async,
                    "--lookahead: the draft drafts on a thread of its own while the target writes steps "
                    "(auto: the depth ceil(target call / draft call))");
}

nlohmann::json lookahead_json(const LookaheadOptions& lookahead) {
  return {{"gamma", lookahead.adaptive ? nlohmann::json("auto") : nlohmann::json(lookahead.gamma)},
          {"verifier", lookahead.verifier},
          {"delimiter", lookahead.delimiter},
          {"width", lookahead.width},
          {"async", lookahead.async}};
}

nlohmann::json step_stats_json(const spec::StepStats& steps) {
  return {{"rounds", steps.rounds},
          {"drafted_steps", steps.drafted_steps},
          {"accepted_steps", steps.accepted_steps},
          {"step_acceptance", steps.acceptance()},
          {"steps_per_round", steps.steps_per_round()},
          {"mean_gamma", steps.mean_gamma()},
          {"mean_draft_length", steps.mean_draft_length()}};
}

}  // namespace seed::launch
