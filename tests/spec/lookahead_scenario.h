// A LookaheadEngine over two StepScriptEngines (step_script_engine.h) on one
// request: the scripts, settings and call times of a scenario, and what
// came of it (the completion, the step statistics and what each engine was
// asked).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "spec/lookahead/lookahead_engine.h"
#include "tests/spec/step_script_engine.h"

namespace seed::spec {

struct Outcome {
  Completion completion;
  StepStats steps;
  int draft_calls = 0;
  int target_calls = 0;
  std::vector<int> target_draft_lengths;  // of every target request
  std::vector<float> draft_temperatures, target_temperatures;  // of every request
};

constexpr const char* kPrompt = "Q?\n";

// Calls of the scripted engines take these times.
struct Delays {
  std::chrono::microseconds draft{0}, target{0};
};

struct Scenario {
  std::vector<std::string> target_steps;
  std::vector<std::vector<std::string>> draft_scripts;  // one per alternative
  LookaheadSettings lookahead;
  int64_t max_new_tokens = 100;
  std::string verifier = "exact";
  Delays delays;
  float temperature = 0;
  EngineStats target_stats;  // what the target engine reports
};

inline Outcome run(const Scenario& scenario) {
  auto tokenizer = std::make_shared<const ByteTokenizer>();
  const size_t prompt_length = tokenizer->encode(kPrompt, false).size();
  auto draft = std::make_unique<StepScriptEngine>(tokenizer, prompt_length, scenario.draft_scripts, scenario.delays.draft);
  auto target = std::make_unique<StepScriptEngine>(tokenizer, prompt_length,
                                                   std::vector<std::vector<std::string>>{scenario.target_steps},
                                                   scenario.delays.target);
  StepScriptEngine* d = draft.get();
  StepScriptEngine* t = target.get();
  t->reported = scenario.target_stats;
  RunSettings settings;
  settings.tokenizer = tokenizer;
  settings.stop_tokens = {ByteTokenizer::kEos};
  LookaheadEngine engine(std::move(draft), std::move(target), settings, scenario.lookahead,
                         make_step_verifier(scenario.verifier));
  GenRequest request;
  request.prompt = kPrompt;
  request.max_new_tokens = scenario.max_new_tokens;
  request.sampling.temperature = scenario.temperature;
  Outcome outcome;
  outcome.completion = engine.generate({request}).front();
  outcome.steps = engine.stats().steps;
  outcome.draft_calls = d->calls;
  outcome.target_calls = t->calls;
  outcome.target_draft_lengths = t->draft_lengths;
  outcome.draft_temperatures = d->temperatures;
  outcome.target_temperatures = t->temperatures;
  return outcome;
}

// Synchronous, one alternative per step; `adaptive`: gamma chosen from
// these call times.
inline Outcome run(const std::vector<std::string>& target_steps, const std::vector<std::string>& draft_steps,
                   int gamma, int64_t max_new_tokens = 100, const std::string& verifier = "exact",
                   std::optional<Delays> adaptive = std::nullopt) {
  Scenario scenario;
  scenario.target_steps = target_steps;
  scenario.draft_scripts = {draft_steps};
  scenario.lookahead.gamma = gamma;
  scenario.lookahead.adaptive = adaptive.has_value();
  scenario.max_new_tokens = max_new_tokens;
  scenario.verifier = verifier;
  scenario.delays = adaptive.value_or(Delays{});
  return run(scenario);
}

inline std::vector<std::string> numbered_steps(int n) {
  std::vector<std::string> steps;
  for (int i = 0; i < n; ++i) steps.push_back("s" + std::to_string(i) + "\n");
  return steps;
}

inline std::string target_alone(const std::vector<std::string>& steps) { return run(steps, steps, 0).completion.text; }

}  // namespace seed::spec
