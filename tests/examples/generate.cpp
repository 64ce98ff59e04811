// The whole model layer in one page: load a Hugging Face folder, prefill a
// prompt into a KV cache, then sample one token at a time.
//
//   example_generate MODEL_DIR "prompt text"
//
// What `seed generate` does, without the command-line plumbing.
#include <iostream>

#include "models/causal_lm.h"
#include "models/base/counter_rng.h"
#include "models/base/sampling.h"
#include "models/tokenizer.h"

using namespace seed;

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: example_generate MODEL_DIR PROMPT\n";
    return 2;
  }
  try {
    // 1. The model (config.json + safetensors) and its tokenizer.
    auto model = models::CausalLM::load(argv[1]);
    auto tokenizer = models::load_tokenizer(argv[1]);
    const int64_t vocab = model->config().vocab_size;

    // 2. A KV cache holds every sequence's keys and values; a sequence is a handle.
    models::KvCache cache = model->make_cache();
    const models::SequenceId sequence = cache.create();

    // 3. Prefill: the whole prompt in one forward; keep the last position's logits.
    const std::vector<int32_t> prompt = tokenizer->encode(argv[2], /*add_bos=*/true);
    at::Tensor logits = model->forward({{sequence, prompt, {}}}, cache, models::LogitsFor::kLast)[0];

    // 4. Decode: turn logits into the sampling distribution, draw by a race
    //    keyed by (seed, request, position) as every engine draws its tokens
    //    (spec/api/verifier.h), feed the token back.
    const SamplingParams sampling{/*temperature=*/0.8f, /*top_k=*/40, /*top_p=*/0.95f};
    std::vector<float> probs(vocab);
    models::TextStream stream(*tokenizer);
    std::cout << argv[2];
    for (int step = 0; step < 24; ++step) {
      sampling_distribution(logits.data_ptr<float>(), vocab, sampling, probs.data());
      const RngKey key{/*seed=*/1, /*request=*/0, static_cast<uint32_t>(cache.length(sequence)),
                       RngPurpose::kResample};
      const int32_t token = race_from(probs.data(), vocab, stream_bits(key));
      if (token == tokenizer->eos_id()) break;
      std::cout << stream.push(token) << std::flush;
      logits = model->forward({{sequence, {token}, {}}}, cache, models::LogitsFor::kLast)[0];
    }
    std::cout << stream.finish() << "\n";

    // 5. The cache can fork a sequence (sharing its prefix) and truncate it.
    const models::SequenceId branch = cache.fork(sequence);
    cache.truncate(branch, static_cast<int64_t>(prompt.size()));
    std::cout << "cache: " << cache.length(sequence) << " and " << cache.length(branch) << " tokens, "
              << cache.bytes_in_use() << " bytes\n";
  } catch (const std::exception& e) {
    std::cerr << "example_generate: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
