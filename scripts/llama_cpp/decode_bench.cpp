// llama.cpp's batch-1 decode speed on a GGUF file, measured the way
// `seed bench forward` measures seed's (bench/forward_bench.cpp): a fresh
// sequence gets one context token, then DECODE_TOKENS single-token forwards,
// each computing the last position's logits and reading one back; one
// warm-up run, then the median over REPEATS runs.
//
// It calls libllama directly (the prebuilt library node-llama-cpp ships),
// because node-llama-cpp's JavaScript path adds per-token overhead of the
// same order as these tiny models' forwards.
//
//   decode_bench BACKEND MODEL.gguf THREADS [REPEATS=5] [DECODE_TOKENS=32]
//
// BACKEND: as load_backend (llama_setup.h) takes it.
//
// Prints one JSON line: {"model", "threads", "decode_tokens_per_s", "runs_ms_per_token"}.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "llama_setup.h"

namespace {

// The filler tokens of forward_bench.cpp.
std::vector<llama_token> filler_tokens(int n, int vocab) {
  std::vector<llama_token> tokens(n);
  for (int i = 0; i < n; ++i) tokens[i] = static_cast<llama_token>((i * 7919LL + 13) % vocab);
  return tokens;
}

void decode_one(llama_context* ctx, llama_token token, llama_pos pos) {
  llama_batch batch = llama_batch_init(1, 0, 1);
  batch.n_tokens = 1;
  batch.token[0] = token;
  batch.pos[0] = pos;
  batch.n_seq_id[0] = 1;
  batch.seq_id[0][0] = 0;
  batch.logits[0] = true;
  if (llama_decode(ctx, batch) != 0) {
    std::fprintf(stderr, "llama_decode failed\n");
    std::exit(1);
  }
  llama_batch_free(batch);
  volatile float first = llama_get_logits_ith(ctx, -1)[0];  // read a logit back, as forward_bench does
  (void)first;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s BACKEND MODEL.gguf THREADS [REPEATS=5] [DECODE_TOKENS=32]\n", argv[0]);
    return 2;
  }
  const char* model_path = argv[2];
  const int threads = std::atoi(argv[3]);
  const int repeats = argc > 4 ? std::atoi(argv[4]) : 5;
  const int decode_tokens = argc > 5 ? std::atoi(argv[5]) : 32;

  load_backend(argv[1]);
  const LoadedModel loaded = load_model(model_path, threads, 256);
  llama_context* ctx = loaded.ctx;

  const int vocab = llama_vocab_n_tokens(llama_model_get_vocab(loaded.model));
  const llama_token context_token = filler_tokens(1, vocab)[0];
  const std::vector<llama_token> inputs = filler_tokens(decode_tokens, vocab);
  std::vector<double> ms_per_token;
  for (int r = 0; r <= repeats; ++r) {  // run 0 is the warm-up
    llama_memory_clear(llama_get_memory(ctx), true);
    const auto start = std::chrono::steady_clock::now();
    decode_one(ctx, context_token, 0);
    for (int i = 0; i < decode_tokens; ++i) decode_one(ctx, inputs[i], i + 1);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (r > 0) ms_per_token.push_back(1e3 * s / decode_tokens);
  }
  std::vector<double> sorted = ms_per_token;
  std::sort(sorted.begin(), sorted.end());
  const size_t n = sorted.size();
  const double median = n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);

  std::printf("{\"model\": \"%s\", \"threads\": %d, \"decode_tokens_per_s\": %.1f, \"runs_ms_per_token\": [", model_path,
              threads, 1e3 / median);
  for (size_t i = 0; i < n; ++i) std::printf("%s%.4f", i ? ", " : "", ms_per_token[i]);
  std::printf("]}\n");

  llama_free(ctx);
  llama_model_free(loaded.model);
  llama_backend_free();
  return 0;
}
