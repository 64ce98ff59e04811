// What the engine tests share: a target and a draft that agrees with it
// often but not always (the target's weights plus noise), written as model
// folders for make_engine; an EDD draft for a target; requests with prompts of different lengths; the
// tokens of completions.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "spec/api/engine.h"

namespace seed::testing {

struct ModelPair {
  std::string target, draft;
};

ModelPair write_model_pair(const std::filesystem::path& dir, int64_t vocab, double noise);

// The two pairs the engine tests use, in a temporary folder removed again:
// `pair` over 64 tokens (noise 0.6) and `small` over 8 (noise 1.0, small
// enough for chi-square tests over two tokens).
struct TestModelPairs {
  explicit TestModelPairs(const std::string& name)
      : dir(std::filesystem::temp_directory_path() / (name + "_" + std::to_string(::getpid()))),
        pair(write_model_pair(dir / "v64", 64, 0.6)),
        small(write_model_pair(dir / "v8", 8, 1.0)) {}
  ~TestModelPairs() { std::filesystem::remove_all(dir); }
  std::filesystem::path dir;
  ModelPair pair, small;
};

// An EDD draft for the model folder `target_dir`, reading its layer
// `layer`, written to `dir`: the target's last layer, norm and LM head over
// those hidden states, so that it agrees with the target often (not always:
// its token rows skip the layers before).
std::string write_edd(const std::string& target_dir, const std::filesystem::path& dir, int64_t layer);

// `count` requests over a vocabulary of 64: prompts of 1, 3, 5, ... tokens,
// each with its own stream, thoughts and evaluations alternating.
inline std::vector<spec::GenRequest> varied_requests(int count, float temperature, int64_t max_new_tokens) {
  std::vector<spec::GenRequest> out;
  for (int i = 0; i < count; ++i) {
    spec::GenRequest r;
    for (int t = 0; t <= 2 * i; ++t) r.prompt_tokens.push_back((7 * t + 3 * i + 1) % 64);
    r.max_new_tokens = max_new_tokens;
    r.sampling.temperature = temperature;
    r.seed = 42;
    r.stream = static_cast<uint64_t>(i);
    r.kind = i % 2 ? spec::RequestKind::kEvaluation : spec::RequestKind::kThought;
    out.push_back(r);
  }
  return out;
}

inline std::vector<std::vector<int32_t>> tokens_of(const std::vector<spec::Completion>& completions) {
  std::vector<std::vector<int32_t>> out;
  for (const spec::Completion& c : completions) out.push_back(c.tokens);
  return out;
}

// tokens_of, where every completion is expected to end without an error.
inline std::vector<std::vector<int32_t>> finished_tokens_of(const std::vector<spec::Completion>& completions) {
  for (const spec::Completion& c : completions) EXPECT_NE(c.finish, spec::FinishReason::kError) << c.error;
  return tokens_of(completions);
}

}  // namespace seed::testing
