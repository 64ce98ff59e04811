// What the corpus's per-kind generators share (corpus.cpp, and the
// Blocksworld kinds in corpus_blocksworld.cpp): one random stream per kind,
// a uniform pick, and the bound on rejection sampling. Each generator is a
// pure function of its config (tasks/corpus.h) and shares no state.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "models/base/error.h"
#include "tasks/corpus.h"
#include "tasks/random_draw.h"

namespace seed::tasks {

// Random streams, one per kind; never renumber (corpora would change).
enum class Stream : uint64_t {
  kPropose = 1,
  kValue = 2,
  kCot = 3,
  kNextAction = 4,
  kEvaluateAction = 5,
  kPlan = 6,
  kShuffle = 7,
  kPrm = 8,
  kPrmStates = 9,
};

// Rejection sampling gives up (a bug, not bad luck) after this many draws.
constexpr int kMaxDraws = 1000000;

inline std::mt19937_64 engine(const CorpusConfig& config, Stream stream) {
  return derive_engine(config.seed, static_cast<uint64_t>(stream));
}

template <typename T>
const T& pick(std::mt19937_64& rng, const std::vector<T>& items) {
  SEED_CHECK(!items.empty(), kInternal) << "corpus: pick from an empty list";
  return items[draw_below(rng, items.size())];
}

// The Blocksworld kinds (corpus_blocksworld.cpp): as many examples as
// `config` asks for, each kind drawn from its own stream.
std::vector<CorpusExample> blocks_next_action(const CorpusConfig& config);
std::vector<CorpusExample> blocks_evaluate_action(const CorpusConfig& config);
std::vector<CorpusExample> blocks_plan(const CorpusConfig& config);

}  // namespace seed::tasks
