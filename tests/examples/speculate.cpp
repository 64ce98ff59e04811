// Speculative decoding in one page: a small draft model proposes a few
// tokens, the target checks them all in one forward, and what it accepts
// (plus one token of its own) is exactly what it would have written alone.
//
//   example_speculate TARGET_DIR DRAFT_DIR
//
// Runs three engines over the same greedy requests: `ar` (the target alone),
// `sd` (draft a chain, verify, repeat) and `seed` (SEED's scheduler: drafter
// threads draft while the target verifies, first come first served). Exits
// 0 when sd's and seed's tokens equal ar's for every request, 1 otherwise.
#include <iostream>
#include <memory>

#include "models/causal_lm.h"
#include "models/tokenizer.h"
#include "spec/drafters/model/draft_model_drafter.h"
#include "spec/engine/model_target.h"
#include "spec/engine/scheduled_engine.h"

using namespace seed;

namespace {

void print_stats(spec::Engine& engine) {
  const spec::EngineStats s = engine.stats();
  std::cout << engine.name() << ": " << s.generated_tokens << " tokens in " << s.target_forwards
            << " target forwards (tau " << s.tau() << "), draft acceptance alpha " << s.alpha() << "\n";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: example_speculate TARGET_DIR DRAFT_DIR\n";
    return 2;
  }
  try {
    // 1. The models. The target is shared by the engines' target handles;
    //    the draft is immutable and shared by every drafter (one copy of its
    //    weights), each drafter keeping only its own KV cache.
    const std::shared_ptr<models::CausalLM> target = models::CausalLM::load(argv[1]);
    const std::shared_ptr<const models::CausalLM> draft = models::CausalLM::load(argv[2]);

    // 2. What every engine shares: the target folder's tokenizer and stop
    //    tokens, and the draft shape: a chain of 4 tokens ({2, 2, 1} would
    //    draft a token tree instead).
    spec::RunSettings settings = spec::model_run_settings(argv[1]);
    settings.k_config = {1, 1, 1, 1};

    // 3. Requests: text prompts, greedy, each with its own random stream
    //    (unused when greedy, but a sampled request's draws depend on it only).
    std::vector<spec::GenRequest> requests;
    for (const char* puzzle : {"4 9 10 13", "1 4 8 8", "2 5 7 11"}) {
      spec::GenRequest r;
      r.prompt = std::string("Input: ") + puzzle + "\nPossible next steps:\n";
      r.max_new_tokens = 48;
      r.sampling.temperature = 0;
      r.stream = requests.size();
      requests.push_back(r);
    }

    // 4. The engines: a Target handle over the target model, and Drafters.
    using spec::ScheduledEngine;
    auto ar = ScheduledEngine::serial("ar", std::make_unique<spec::ModelTarget>(target), nullptr, settings);
    auto sd = ScheduledEngine::serial("sd", std::make_unique<spec::ModelTarget>(target),
                                      spec::make_draft_model_drafter(draft), settings);
    std::vector<std::unique_ptr<spec::Drafter>> drafters;
    for (int i = 0; i < 2; ++i) drafters.push_back(spec::make_draft_model_drafter(draft));
    auto scheduled = ScheduledEngine::seed("seed", std::make_unique<spec::ModelTarget>(target), std::move(drafters),
                                           settings, spec::Scheduler(spec::SchedulePolicy::kFcfs, 1),
                                           /*draft_threads=*/1);

    // 5. Generate, and check the invariant: greedy speculation is lossless.
    const std::vector<spec::Completion> reference = ar->generate(requests);
    bool same = true;
    for (spec::Engine* engine : std::initializer_list<spec::Engine*>{sd.get(), scheduled.get()}) {
      const std::vector<spec::Completion> out = engine->generate(requests);
      for (size_t i = 0; i < out.size(); ++i) {
        if (out[i].tokens == reference[i].tokens) continue;
        std::cerr << engine->name() << " differs from ar on request " << i << "\n";
        same = false;
      }
    }
    std::cout << requests[0].prompt << reference[0].text << "\n";
    for (spec::Engine* engine : std::initializer_list<spec::Engine*>{ar.get(), sd.get(), scheduled.get()}) print_stats(*engine);
    std::cout << (same ? "speculative output equals autoregressive output\n" : "MISMATCH\n");
    return same ? 0 : 1;
  } catch (const std::exception& e) {
    std::cerr << "example_speculate: " << e.what() << "\n";
    return 1;
  }
}
