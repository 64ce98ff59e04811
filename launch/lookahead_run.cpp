#include "launch/lookahead_run.h"

#include "models/base/error.h"
#include "models/tokenizer.h"

namespace seed::launch {

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
  spec::RunSettings settings;
  settings.tokenizer = models::load_tokenizer(engine.target);
  settings.eos = settings.tokenizer->eos_id();
  spec::LookaheadSettings steps;
  steps.gamma = lookahead.gamma;
  steps.delimiter = lookahead.delimiter;
  return std::make_unique<spec::LookaheadEngine>(spec::make_engine(draft), std::move(target), settings, steps,
                                                 spec::make_step_verifier(lookahead.verifier));
}

nlohmann::json lookahead_json(const LookaheadOptions& lookahead) {
  return {{"gamma", lookahead.gamma}, {"verifier", lookahead.verifier}, {"delimiter", lookahead.delimiter}};
}

nlohmann::json step_stats_json(const spec::StepStats& steps) {
  return {{"rounds", steps.rounds},
          {"drafted_steps", steps.drafted_steps},
          {"accepted_steps", steps.accepted_steps},
          {"step_acceptance", steps.acceptance()},
          {"steps_per_round", steps.rounds ? static_cast<double>(steps.committed_steps) / steps.rounds : 0.0}};
}

}  // namespace seed::launch
