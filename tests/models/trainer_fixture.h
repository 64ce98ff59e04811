// TrainerTest: the fixture of the trainer tests, a generated arithmetic
// corpus and a SentencePiece tokenizer trained on it, in a temporary folder
// the suite owns from SetUpTestSuite to TearDownTestSuite; tiny training
// runs (hidden 32, 2 layers, seq_len 32) that write into it. With the
// helpers the tests share: examples, JSONL corpora, loss and weight checks.
#pragma once

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <torch/torch.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "models/causal_lm.h"
#include "models/tokenizer.h"
#include "models/training/trainer.h"
#include "models/training/training_data.h"

namespace seed::models {

namespace fs = std::filesystem;

constexpr int kVocabSize = 300;
constexpr int kCorpusLines = 400;

// "what is 7 plus 5 =" -> " 12": short examples, several to a row.
inline std::vector<Example> arithmetic_examples(int count, uint32_t seed) {
  const char* ops[] = {"plus", "minus", "times"};
  std::mt19937 rng(seed);
  std::vector<Example> out;
  for (int i = 0; i < count; ++i) {
    const int a = static_cast<int>(rng() % 20), b = static_cast<int>(rng() % 10), op = i % 3;
    const int c = op == 0 ? a + b : op == 1 ? a - b : a * b;
    out.push_back({"what is " + std::to_string(a) + " " + ops[op] + " " + std::to_string(b) + " =",
                   " " + std::to_string(c)});
  }
  return out;
}

inline void write_jsonl(const fs::path& path, const std::vector<Example>& examples) {
  std::ofstream out(path);
  for (const Example& e : examples) {
    out << nlohmann::json{{"prompt", e.prompt}, {"completion", e.completion}, {"source", "test"}}.dump() << "\n";
  }
}

inline double mean_of_last(const std::vector<double>& values, size_t n) {
  return std::accumulate(values.end() - static_cast<std::ptrdiff_t>(n), values.end(), 0.0) / static_cast<double>(n);
}

inline double max_weight_difference(CausalLM& a, CausalLM& b) {
  const auto pa = a.weights().parameters(), pb = b.weights().parameters();
  EXPECT_EQ(pa.size(), pb.size());
  double diff = 0;
  for (size_t i = 0; i < pa.size() && i < pb.size(); ++i) {
    diff = std::max(diff, (pa[i] - pb[i]).abs().max().item<double>());
  }
  return diff;
}

class TrainerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    root_ = fs::temp_directory_path() / ("seed_trainer_test_" + std::to_string(::getpid()));
    fs::create_directories(root_ / "tokenizer");
    const std::vector<Example> corpus = arithmetic_examples(kCorpusLines, 7);
    write_jsonl(root_ / "corpus.jsonl", corpus);
    std::vector<std::string> text;
    for (const Example& e : corpus) text.push_back(e.prompt + e.completion);
    train_sentencepiece(text, kVocabSize, (root_ / "tokenizer" / "tokenizer.model").string());
  }
  static void TearDownTestSuite() { fs::remove_all(root_); }

  // A tiny run writing into root/<name>, with the suite's tokenizer.
  static TrainConfig tiny_config(const std::string& name) {
    TrainConfig c;
    c.source = "test-config.json";
    c.model.hidden_size = 32;
    c.model.intermediate_size = 64;
    c.model.num_hidden_layers = 2;
    c.model.num_attention_heads = 4;
    c.model.num_key_value_heads = 2;
    c.model.head_dim = 8;
    c.model.max_position_embeddings = 32;
    c.model.tie_word_embeddings = true;
    c.corpus = {(root_ / "corpus.jsonl").string()};
    c.eval_fraction = 0.1;
    c.tokenizer.from_dir = (root_ / "tokenizer").string();
    c.batch_size = 8;
    c.seq_len = 32;
    c.steps = 40;
    c.lr = 1e-2;
    c.min_lr = 1e-3;
    c.warmup_steps = 4;
    c.eval_interval = 20;
    c.eval_batches = 2;
    c.checkpoint_interval = 0;
    c.output = (root_ / name).string();
    c.seed = 1;
    return c;
  }

  static inline fs::path root_;
};

}  // namespace seed::models
