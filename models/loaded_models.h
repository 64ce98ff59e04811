// LoadedModels: models shared by the engines of one process, as the
// points of `seed sweep` and the engines of `seed bench spec` make them: a
// load of a folder with the same options gets the model an earlier engine
// loaded, so that a sweep loads each model once rather than once a point
// (and on a GPU keeps the CUDA graphs it captured), and engines side by
// side hold one copy.
//
// Memory: a load that finds nothing first lets go of every model the
// current run (next_run) has not asked for, so the models of two runs are
// held side by side only where the second run uses them. Thread-safe.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "models/causal_lm.h"
#include "models/load_options.h"

namespace seed::models {

class LoadedModels {
 public:
  struct Loaded {
    std::shared_ptr<CausalLM> model;
    bool reused = false;  // loaded by an earlier run
  };

  // The model of `model_dir` with `options`: the one held, or
  // CausalLM::load's (which it throws), then held; `before_loading`, if
  // set, is called just before a load (not for a model held).
  Loaded load(const std::string& model_dir, const LoadOptions& options,
              const std::function<void()>& before_loading = {});

  // A new run starts: the models held so far count as not asked for.
  void next_run();

 private:
  struct Entry {
    std::string model_dir;
    LoadOptions options;
    std::shared_ptr<CausalLM> model;
    bool asked = false;  // by the current run
  };
  std::mutex mutex_;
  std::vector<Entry> entries_;
};

}  // namespace seed::models
