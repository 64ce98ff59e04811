// `seed run --lookahead GAMMA`: the run's engine as the target engine of
// step-level speculation, with the draft model (--draft) drafting steps
// autoregressively (spec/lookahead/lookahead_engine.h): the flags, and
// what they make of spec::EngineOptions.
#pragma once

#include <memory>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "spec/api/engine.h"
#include "spec/engine/engine_factory.h"

namespace seed::launch {

struct LookaheadOptions {
  int gamma = 0;  // drafted steps per round; 0: off
  bool adaptive = false;  // --lookahead auto: gamma chosen each round (from 1)
  std::string verifier;  // "": the task's (task.json "lookahead")
  std::string delimiter = "\n";
  std::string judge_prompt;  // the judge verifier's question: the task's
  std::string judge_model;   // --judge-model: "" = the target judges
  int width = 1;       // --lookahead-width: drafted alternatives per step
  bool async = false;  // --lookahead-async: draft while the target works
};

// The shape of step speculation the flags ask for, as make_engine takes it
// (spec::EngineOptions::lookahead).
spec::LookaheadSettings lookahead_settings(const LookaheadOptions& lookahead);
// Makes the step verifier the flags name (spec::EngineOptions::
// step_verifier): exact, normalized, judge (the target's engine, or an
// ar-batch engine over --judge-model, answers the task's judge_prompt),
// hidden[:THRESHOLD] (the target model, whole, in this process: the
// engine's own through EngineOptions::loaded_models where it runs here)
// or a task step checker (tasks/step_checkers.h). Throws kInvalidArgument
// naming --step-verifier for a name it does not know and kNotFound naming
// --judge-model for a judge model folder that is missing, at once, and
// kInvalidArgument for a judge without a judge_prompt, when the maker runs.
spec::StepVerifierMaker step_verifier_maker(const LookaheadOptions& lookahead);

// Parses --lookahead: a number of steps >= 1, or "auto".
void parse_lookahead(const std::string& value, LookaheadOptions& lookahead);
// Adds --lookahead-width and --lookahead-async to a command.
void add_lookahead_shape_options(CLI::App* command, LookaheadOptions* lookahead);
// {"gamma" (a number or "auto"), "verifier", "delimiter", "width",
// "async"}, for run.json and summary.json.
nlohmann::json lookahead_json(const LookaheadOptions& lookahead);
// {"rounds", "drafted_steps", "accepted_steps", "step_acceptance",
// "steps_per_round" (per request in flight), "mean_gamma",
// "mean_draft_length" (the token draft length auto chose; 0: none chosen)}
// of an engine's EngineStats::steps.
nlohmann::json step_stats_json(const spec::StepStats& steps);

}  // namespace seed::launch
