// The trainer's data: the loss mask covers only the completion and EOS (so
// that noise prompts do not stop a completion from being learned), and the
// data order is a function of seed and epoch that seek reproduces.
#include "models/training/training_data.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "models/tokenizer.h"
#include "tests/models/trainer_fixture.h"

namespace seed::models {
namespace {

TEST_F(TrainerTest, LossMaskCoversOnlyTheCompletionAndEos) {
  auto tokenizer = load_tokenizer((root_ / "tokenizer").string());
  const Example example{"what is 3 plus 4 =", " 7"};
  bool merged = true;
  const TokenizedExample t = tokenize_example(*tokenizer, example, &merged);
  EXPECT_FALSE(merged);
  EXPECT_EQ(t.tokens.front(), tokenizer->bos_id());
  EXPECT_EQ(t.tokens.back(), tokenizer->eos_id());
  EXPECT_EQ(t.completion_begin, 1 + static_cast<int64_t>(tokenizer->encode(example.prompt, false).size()));
  EXPECT_EQ(tokenizer->decode({t.tokens.begin() + t.completion_begin, t.tokens.end()}), "7");

  const PackedRows rows = pack_examples({t, t}, {0, 1}, 33, tokenizer->eos_id());
  ASSERT_EQ(rows.rows(), 1);
  const auto n = static_cast<int64_t>(t.tokens.size());
  for (int64_t i = 0; i < 33; ++i) {
    const int64_t in_example = i % n;
    const bool learned = i < 2 * n && in_example >= t.completion_begin;
    EXPECT_EQ(rows.loss_mask[i], learned ? 1 : 0) << "position " << i;
  }
}

TEST_F(TrainerTest, NoisePromptsDoNotStopTheCompletionFromBeingLearned) {
  // Random-letter prompts and a fixed completion. Learned unmasked, the 12
  // letters alone would average >= 12 ln(26) / 16 = 2.4 nats a token; masked,
  // the completion is certain after the prompt's closing " =".
  std::mt19937 rng(3);
  std::vector<Example> noise;
  for (int i = 0; i < 200; ++i) {
    std::string prompt;
    for (int j = 0; j < 12; ++j) prompt += static_cast<char>('a' + rng() % 26);
    noise.push_back({prompt + " =", " ok"});
  }
  write_jsonl(root_ / "noise.jsonl", noise);
  TrainConfig c = tiny_config("noise");
  c.corpus = {(root_ / "noise.jsonl").string()};
  const TrainResult r = train(c);
  EXPECT_LT(mean_of_last(r.ce, 5), 0.5);
}

TEST_F(TrainerTest, DataOrderIsAFunctionOfSeedAndEpochAndSeekReproducesIt) {
  const std::vector<int64_t> a = shuffled_indices(50, 9, 0);
  EXPECT_EQ(a, shuffled_indices(50, 9, 0));
  EXPECT_NE(a, shuffled_indices(50, 9, 1));
  EXPECT_NE(a, shuffled_indices(50, 10, 0));
  std::vector<int64_t> sorted = a;
  std::sort(sorted.begin(), sorted.end());
  for (int64_t i = 0; i < 50; ++i) EXPECT_EQ(sorted[i], i);

  auto tokenizer = load_tokenizer((root_ / "tokenizer").string());
  std::vector<TokenizedExample> examples;
  for (const Example& e : arithmetic_examples(60, 5)) examples.push_back(tokenize_example(*tokenizer, e, nullptr));
  TrainingData data(examples, 33, tokenizer->eos_id(), 4);
  std::vector<int32_t> skip, expected, actual;
  std::vector<uint8_t> mask;
  data.next_rows(data.epoch_rows().rows() + 3, &skip, &mask);  // into epoch 1
  const DataPosition saved = data.position();
  EXPECT_EQ(saved.epoch, 1);
  data.next_rows(40, &expected, &mask);
  TrainingData fresh(examples, 33, tokenizer->eos_id(), 4);
  fresh.seek(saved);
  fresh.next_rows(40, &actual, &mask);
  EXPECT_EQ(actual, expected);
}

}  // namespace
}  // namespace seed::models
