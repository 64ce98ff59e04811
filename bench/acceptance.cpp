#include "bench/acceptance.h"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "models/base/counter_rng.h"
#include "models/base/error.h"
#include "spec/verifier.h"

namespace seed::bench {
namespace {

// The sampling distribution of `logits` [V] appended to `rows`.
void append_distribution(const at::Tensor& logits, const SamplingParams& sampling, std::vector<float>& rows) {
  const at::Tensor row = logits.to(torch::kCPU).contiguous();
  const int64_t vocab = row.size(0);
  rows.resize(rows.size() + vocab);
  sampling_distribution(row.data_ptr<float>(), vocab, sampling, rows.data() + rows.size() - vocab);
}

}  // namespace

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

AcceptanceResult measure_acceptance(models::CausalLM& target, models::CausalLM& draft,
                                    const std::vector<std::vector<int32_t>>& prompts,
                                    const AcceptanceOptions& options) {
  const int64_t vocab = target.config().vocab_size;
  SEED_CHECK(draft.config().vocab_size == vocab, kInvalidArgument)
      << "draft vocabulary " << draft.config().vocab_size << " != target vocabulary " << vocab;
  const int k = options.draft_length;
  models::KvCache target_cache = target.make_cache(), draft_cache = draft.make_cache();
  AcceptanceResult result;
  for (size_t request = 0; request < prompts.size(); ++request) {
    const auto& prompt = prompts[request];
    const models::SequenceId t = target_cache.create(), d = draft_cache.create();
    at::Tensor p0 = target.forward({{t, prompt, {}}}, target_cache, models::LogitsFor::kLast)[0];
    at::Tensor q0 = draft.forward({{d, prompt, {}}}, draft_cache, models::LogitsFor::kLast)[0];
    int64_t generated = 0;
    bool done = false;
    while (!done && generated < options.max_new_tokens &&
           target_cache.length(t) + k + 1 < target.config().max_position_embeddings) {
      const uint32_t base = static_cast<uint32_t>(target_cache.length(t));
      // Draft a chain of k tokens, each from q at its context.
      spec::DraftTree tree;
      std::vector<double> confidence;
      at::Tensor q = q0;
      for (int i = 0; i < k; ++i) {
        append_distribution(q, options.sampling, tree.q);
        const float* qi = tree.q.data() + tree.q.size() - vocab;
        const RngKey key{options.seed, request, base + i, RngPurpose::kDraft};
        tree.tokens.push_back(sample_from(qi, vocab, uniform(key)));
        confidence.push_back(options.sampling.greedy() ? torch::softmax(q.to(torch::kCPU), -1)[tree.tokens.back()].item<double>()
                                                       : qi[tree.tokens.back()]);
        tree.parents.push_back(i - 1);
        if (i + 1 < k) q = draft.forward({{d, {tree.tokens.back()}, {}}}, draft_cache, models::LogitsFor::kLast)[0];
      }
      tree.q.resize((k + 1) * vocab, 0.0f);  // context k has no children
      // One target forward gives p at every context of the chain.
      std::vector<float> p;
      append_distribution(p0, options.sampling, p);
      const at::Tensor chain = target.forward({{t, tree.tokens, {}}}, target_cache, models::LogitsFor::kAll)[0];
      for (int i = 0; i < k; ++i) append_distribution(chain[i], options.sampling, p);
      spec::VerifyRequest verify{&tree, p.data(), vocab, options.sampling, options.seed, request, base};
      const spec::Verdict verdict = spec::verify(verify);
      const int accepted = static_cast<int>(verdict.accepted.size());
      for (int i = 0; i < std::min(accepted + 1, k); ++i) result.calibration.add(confidence[i], i < accepted);
      result.proposed += k;
      result.accepted += accepted;
      result.rounds += 1;
      result.generated += accepted + 1;
      generated += accepted + 1;
      // Keep the accepted prefix in both caches, then feed the bonus token.
      target_cache.truncate(t, base + accepted);
      p0 = target.forward({{t, {verdict.bonus}, {}}}, target_cache, models::LogitsFor::kLast)[0];
      draft_cache.truncate(d, base + std::min(accepted, k - 1));
      std::vector<int32_t> feed(tree.tokens.begin() + std::min(accepted, k - 1), tree.tokens.begin() + accepted);
      feed.push_back(verdict.bonus);
      q0 = draft.forward({{d, feed, {}}}, draft_cache, models::LogitsFor::kLast)[0];
      for (int32_t token : verdict.tokens) done = done || token == options.eos;
    }
    target_cache.release(t);
    draft_cache.release(d);
  }
  return result;
}

}  // namespace seed::bench
