// Greedy generation with llama.cpp, plain (ar) or with chain speculative
// decoding (sd: the draft proposes K tokens one at a time, the target checks
// them in one K+1-token forward and keeps the longest prefix it agrees with,
// plus its own next token), the loop of llama.cpp's examples/speculative-simple
// on the prebuilt libllama. Greedy verification keeps the output exactly the
// target's own greedy output.
//
//   spec_bench BACKEND THREADS REQUESTS TARGET.gguf [DRAFT.gguf K]   (BACKEND: as load_backend takes it)
//
// REQUESTS has one request a line: "REPEAT MAX_NEW_TOKENS id id ...". The
// requests of one repeat run one after another; a repeat's tokens/s is its
// generated tokens over its wall time (prefill included), as `seed bench
// spec` counts them. The first request runs once untimed as a warm-up.
// Prints one JSON line: engine, threads, median tokens/s, per-repeat tokens/s,
// generated tokens, tau (tokens per target forward, prefill included) and a
// checksum of the generated tokens (greedy ar and sd must print the same).
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "llama_setup.h"

namespace {

struct Request {
  int max_new_tokens = 0;
  std::vector<llama_token> prompt;
};

struct Model {
  llama_model* model = nullptr;
  llama_context* ctx = nullptr;
  int n = 0;  // tokens in the KV cache

  void load(const char* path, int threads) {
    const LoadedModel loaded = load_model(path, threads, 512);
    model = loaded.model;
    ctx = loaded.ctx;
  }

  void reset() {
    llama_memory_clear(llama_get_memory(ctx), true);
    n = 0;
  }

  // Appends `tokens` to the cache; logits for every one of them or the last.
  void decode(const std::vector<llama_token>& tokens, bool all_logits) {
    llama_batch batch = llama_batch_init(static_cast<int32_t>(tokens.size()), 0, 1);
    batch.n_tokens = static_cast<int32_t>(tokens.size());
    for (size_t i = 0; i < tokens.size(); ++i) {
      batch.token[i] = tokens[i];
      batch.pos[i] = n + static_cast<llama_pos>(i);
      batch.n_seq_id[i] = 1;
      batch.seq_id[i][0] = 0;
      batch.logits[i] = all_logits || i + 1 == tokens.size();
    }
    if (llama_decode(ctx, batch) != 0) {
      std::fprintf(stderr, "llama_decode failed\n");
      std::exit(1);
    }
    llama_batch_free(batch);
    n += static_cast<int>(tokens.size());
  }

  // Drops cached tokens from position `keep` on.
  void truncate(int keep) {
    llama_memory_seq_rm(llama_get_memory(ctx), 0, keep, -1);
    n = keep;
  }

  // Greedy token from the logits of batch row `i` (-1: the last).
  llama_token argmax(int i) const {
    const float* logits = llama_get_logits_ith(ctx, i);
    const int vocab = llama_vocab_n_tokens(llama_model_get_vocab(model));
    return static_cast<llama_token>(std::max_element(logits, logits + vocab) - logits);
  }
};

struct Counts {
  int generated = 0;
  int target_forwards = 0;
  uint64_t checksum = 0;  // of the generated tokens: ar and sd must agree
};

// Greedy generation of one request; draft == nullptr: plain decoding.
void generate(Model& target, Model* draft, int k, const Request& r, Counts& counts) {
  const llama_token eos = llama_vocab_eos(llama_model_get_vocab(target.model));
  std::vector<llama_token> tokens = r.prompt;  // prompt, then the generated tokens
  int generated = 0;
  // Keeps `t`; false when the request is done. EOS ends it uncounted, as seed counts.
  auto append = [&](llama_token t) {
    if (t == eos) return false;
    tokens.push_back(t);
    ++generated;
    counts.checksum = counts.checksum * 1000003 + static_cast<uint64_t>(t);
    return generated < r.max_new_tokens;
  };

  target.reset();
  target.decode(r.prompt, false);
  ++counts.target_forwards;
  bool more = append(target.argmax(-1));
  if (draft) draft->reset();
  while (more) {
    // The tokens the target has not seen: the newest one.
    std::vector<llama_token> batch(tokens.begin() + target.n, tokens.end());
    std::vector<llama_token> drafts;
    if (draft) {
      const int want = std::min(k, r.max_new_tokens - generated - 1);
      std::vector<llama_token> feed(tokens.begin() + draft->n, tokens.end());
      for (int i = 0; i < want; ++i) {
        draft->decode(feed, false);
        drafts.push_back(draft->argmax(-1));
        feed = {drafts.back()};
      }
    }
    batch.insert(batch.end(), drafts.begin(), drafts.end());
    target.decode(batch, true);
    ++counts.target_forwards;
    // Row i of the batch predicts drafts[i]; the first disagreement is the
    // target's own token, and the round ends there.
    for (size_t i = 0; more; ++i) {
      const llama_token t = target.argmax(static_cast<int>(i));
      more = append(t);
      if (i >= drafts.size() || t != drafts[i]) break;
    }
    // Cached: everything but the newest token, at most.
    const int valid = static_cast<int>(tokens.size()) - 1;
    target.truncate(valid);
    if (draft && draft->n > valid) draft->truncate(valid);
  }
  counts.generated += generated;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5 && argc != 7) {
    std::fprintf(stderr, "usage: %s BACKEND THREADS REQUESTS TARGET.gguf [DRAFT.gguf K]\n", argv[0]);
    return 2;
  }
  const int threads = std::atoi(argv[2]);
  std::map<int, std::vector<Request>> repeats;
  std::ifstream in(argv[3]);
  for (std::string line; std::getline(in, line);) {
    std::istringstream fields(line);
    int repeat = 0;
    Request r;
    fields >> repeat >> r.max_new_tokens;
    for (llama_token t; fields >> t;) r.prompt.push_back(t);
    repeats[repeat].push_back(r);
  }
  if (repeats.empty()) return 2;

  load_backend(argv[1]);
  Model target, draft;
  target.load(argv[4], threads);
  const bool speculative = argc == 7;
  const int k = speculative ? std::atoi(argv[6]) : 0;
  if (speculative) draft.load(argv[5], threads);
  Model* drafter = speculative ? &draft : nullptr;

  Counts warm;
  generate(target, drafter, k, repeats.begin()->second.front(), warm);

  Counts total;
  std::vector<double> tokens_per_s;
  for (const auto& [repeat, requests] : repeats) {
    Counts counts;
    const auto start = std::chrono::steady_clock::now();
    for (const Request& r : requests) generate(target, drafter, k, r, counts);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    tokens_per_s.push_back(counts.generated / s);
    total.generated += counts.generated;
    total.target_forwards += counts.target_forwards;
    total.checksum = total.checksum * 31 + counts.checksum;
  }

  std::printf("{\"engine\": \"%s\", \"threads\": %d, \"tokens_per_s\": %.1f, \"runs\": [", speculative ? "sd" : "ar",
              threads, median(tokens_per_s));
  for (size_t i = 0; i < tokens_per_s.size(); ++i) std::printf("%s%.1f", i ? ", " : "", tokens_per_s[i]);
  std::printf("], \"generated\": %d, \"tau\": %.3f, \"checksum\": \"%016llx\"}\n", total.generated,
              static_cast<double>(total.generated) / total.target_forwards,
              static_cast<unsigned long long>(total.checksum));

  llama_free(target.ctx);
  llama_model_free(target.model);
  if (speculative) {
    llama_free(draft.ctx);
    llama_model_free(draft.model);
  }
  llama_backend_free();
  return 0;
}
