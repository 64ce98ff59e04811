#include "models/autoregressive.h"

#include <algorithm>

#include <torch/torch.h>

#include "models/base/counter_rng.h"
#include "models/base/error.h"

namespace seed::models {

DecodeFinish decode_autoregressive(CausalLM& model, KvCache& cache, const std::vector<int32_t>& prompt,
                                   const DecodeOptions& options, const std::function<bool(int32_t)>& on_token) {
  SEED_CHECK(!prompt.empty(), kInvalidArgument) << "cannot decode after an empty prompt";
  const int64_t vocab = model.config().vocab_size;
  const int64_t context = model.config().max_position_embeddings;
  const SequenceId seq = cache.create();
  std::vector<float> probs(vocab);
  DecodeFinish finish = DecodeFinish::kLength;
  try {
    at::Tensor logits = model.forward({{seq, prompt, {}}}, cache, LogitsFor::kLast)[0].cpu();
    for (int64_t generated = 0; generated < options.max_new_tokens; ++generated) {
      const int64_t position = cache.length(seq);
      if (position >= context) {
        finish = DecodeFinish::kContext;
        break;
      }
      sampling_distribution(logits.data_ptr<float>(), vocab, options.sampling, probs.data());
      const RngKey key{options.seed, options.request, static_cast<uint32_t>(position), RngPurpose::kSample};
      const int32_t token = sample_from(probs.data(), vocab, uniform(key));
      if (std::find(options.stop_tokens.begin(), options.stop_tokens.end(), token) != options.stop_tokens.end()) {
        finish = DecodeFinish::kEos;
        break;
      }
      if (!on_token(token)) {
        finish = DecodeFinish::kStopped;
        break;
      }
      if (generated + 1 < options.max_new_tokens && position + 1 < context) {
        logits = model.forward({{seq, {token}, {}}}, cache, LogitsFor::kLast)[0].cpu();
      }
    }
  } catch (...) {
    cache.release(seq);
    throw;
  }
  cache.release(seq);
  return finish;
}

const char* decode_finish_name(DecodeFinish finish) {
  switch (finish) {
    case DecodeFinish::kLength: return "length";
    case DecodeFinish::kEos: return "eos";
    case DecodeFinish::kStopped: return "stop";
    case DecodeFinish::kContext: return "context";
  }
  return "unknown";
}

}  // namespace seed::models
