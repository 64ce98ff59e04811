// What decode_bench and spec_bench share: the prebuilt ggml CPU backend,
// and a model with a one-sequence context on a given number of threads.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>

#include "ggml-backend.h"
#include "llama.h"

// BACKEND: the folder of prebuilt CPU variants (the best one for this CPU
// is loaded: zen4, skylakex, haswell...), or one variant's library
// (libggml-cpu-haswell.so: the AVX2 build, to compare with seed's AVX2
// kernels on any CPU). Logs warnings and errors only; exits on failure.
inline void load_backend(const std::string& backend) {
  llama_log_set([](ggml_log_level level, const char* text, void*) {
    if (level == GGML_LOG_LEVEL_WARN || level == GGML_LOG_LEVEL_ERROR) std::fputs(text, stderr);
  }, nullptr);
  if (backend.size() > 3 && backend.compare(backend.size() - 3, 3, ".so") == 0) {
    if (!ggml_backend_load(backend.c_str())) {
      std::fprintf(stderr, "cannot load %s\n", backend.c_str());
      std::exit(1);
    }
  } else {
    ggml_backend_load_all_from_path(backend.c_str());
  }
  llama_backend_init();
  std::fprintf(stderr, "%s\n", llama_print_system_info());  // the CPU features of the variant loaded
}

struct LoadedModel {
  llama_model* model = nullptr;
  llama_context* ctx = nullptr;
};

// A 1024-token context for one sequence; exits naming the file on failure.
inline LoadedModel load_model(const char* path, int threads, int n_batch) {
  LoadedModel m;
  m.model = llama_model_load_from_file(path, llama_model_default_params());
  if (!m.model) {
    std::fprintf(stderr, "cannot load %s\n", path);
    std::exit(1);
  }
  llama_context_params params = llama_context_default_params();
  params.n_ctx = 1024;
  params.n_batch = n_batch;
  params.n_seq_max = 1;
  params.n_threads = threads;
  params.n_threads_batch = threads;
  params.no_perf = true;
  m.ctx = llama_init_from_model(m.model, params);
  if (!m.ctx) {
    std::fprintf(stderr, "cannot make a context for %s\n", path);
    std::exit(1);
  }
  return m;
}
