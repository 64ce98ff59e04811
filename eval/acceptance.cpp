#include "eval/acceptance.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "models/base/error.h"
#include "spec/drafters/model/draft_model_drafter.h"
#include "spec/drafters/model/edd_drafter.h"
#include "spec/engine/model_target.h"

namespace seed::eval {
void Calibration::add(double token_confidence, bool was_accepted) {
  const int bin = std::clamp(static_cast<int>(token_confidence * kBins), 0, kBins - 1);
  tokens[bin] += 1;
  accepted[bin] += was_accepted ? 1 : 0;
  confidence[bin] += token_confidence;
}

int64_t Calibration::total() const { return std::accumulate(tokens.begin(), tokens.end(), int64_t{0}); }

double Calibration::ece() const {
  const int64_t n = total();
  if (n == 0) return 0.0;
  double error = 0;
  for (int b = 0; b < kBins; ++b) {
    if (tokens[b] == 0) continue;
    const double count = static_cast<double>(tokens[b]);
    error += count / static_cast<double>(n) * std::abs(static_cast<double>(accepted[b]) / count - confidence[b] / count);
  }
  return error;
}

AcceptanceResult measure_acceptance(std::shared_ptr<models::CausalLM> target,
                                    std::shared_ptr<const models::CausalLM> draft,
                                    const std::vector<std::vector<int32_t>>& prompts,
                                    const AcceptanceOptions& options) {
  const models::ModelConfig& t = target->config();
  const models::ModelConfig& d = draft->config();
  SEED_CHECK(d.vocab_size == t.vocab_size, kInvalidArgument)
      << "draft vocabulary " << d.vocab_size << " != target vocabulary " << t.vocab_size;
  models::KvCacheOptions target_cache;
  std::unique_ptr<spec::Drafter> drafter;
  if (d.is_edd()) {
    SEED_CHECK(d.hidden_size == t.hidden_size && d.edd_target_layer < t.num_hidden_layers, kInvalidArgument)
        << "the EDD draft reads layer " << d.edd_target_layer << " at width " << d.hidden_size << ", the target has "
        << t.num_hidden_layers << " layers of width " << t.hidden_size;
    target_cache.hidden_layer = d.edd_target_layer;
    drafter = spec::make_edd_drafter(draft, {}, options.draft_cut);
  } else {
    drafter = spec::make_draft_model_drafter(draft, {}, options.draft_cut);
  }
  spec::ModelTarget verifier(std::move(target), target_cache);
  spec::DraftSettings settings;
  settings.sampling = options.sampling;
  settings.sample_drafts = options.sample_drafts;
  settings.seed = options.seed;
  settings.k_config.assign(static_cast<size_t>(options.draft_length), 1);
  AcceptanceResult result;
  for (size_t request = 0; request < prompts.size(); ++request) {
    settings.stream = request;
    verifier.start(request, prompts[request], spec::TargetSettings{options.sampling, options.seed, request});
    drafter->start(request, prompts[request], settings);
    int64_t generated = 0;
    bool done = false;
    while (!done && generated < options.max_new_tokens && verifier.room(request) >= 0) {
      const int depth = static_cast<int>(std::min<int64_t>(options.draft_length, verifier.room(request)));
      const spec::DraftTree chain = drafter->propose(request, depth);
      const spec::Verdict verdict = verifier.verify({{request, &chain}}).front();
      const int64_t drafted = static_cast<int64_t>(chain.tokens.size());
      const int64_t accepted = static_cast<int64_t>(verdict.accepted.size());
      for (int64_t i = 0; i < std::min(accepted + 1, drafted); ++i) {
        result.calibration.add(chain.confidence.at(static_cast<size_t>(i)), i < accepted);
      }
      result.proposed += drafted;
      result.accepted += accepted;
      result.rejections += accepted < drafted ? 1 : 0;
      result.rounds += 1;
      result.generated += static_cast<int64_t>(verdict.tokens.size());
      generated += static_cast<int64_t>(verdict.tokens.size());
      for (int32_t token : verdict.tokens) done = done || token == options.eos;
      drafter->advance(request, verdict);
    }
    verifier.finish(request);
    drafter->finish(request);
  }
  return result;
}

}  // namespace seed::eval
