// Which rows and columns each rank of a tensor-parallel group holds, and the
// errors for a tp size the model's shape does not allow.
#include "models/tp_shard.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "models/model_weights.h"
#include "tests/models/tiny_models.h"
#include "tests/throws_error.h"

namespace seed::models {
namespace {

using seed::testing::throws_error;
using testing::tiny_config;

TEST(TpShard, WholeModelIsOneShard) {
  const ModelConfig c = tiny_config("llama");
  const TpShard s = TpShard::whole(c);
  EXPECT_TRUE(s.is_whole());
  EXPECT_EQ(s.heads, c.num_attention_heads);
  EXPECT_EQ(s.kv_heads, c.num_key_value_heads);
  EXPECT_EQ(s.intermediate, c.intermediate_size);
  EXPECT_EQ(s.vocab, c.vocab_size);
  const ModelConfig local = s.local_config(c);
  EXPECT_EQ(local.num_attention_heads, c.num_attention_heads);
  EXPECT_EQ(local.num_key_value_heads, c.num_key_value_heads);
}

TEST(TpShard, SplitsHeadsKvHeadsMlpAndVocabularyEvenly) {
  const ModelConfig c = tiny_config("llama");  // 4 heads, 2 kv heads, intermediate 48, vocab 64
  const TpShard s = TpShard::of(c, 1, 2);
  EXPECT_EQ(s.head_begin, 2);
  EXPECT_EQ(s.heads, 2);
  EXPECT_EQ(s.kv_head_begin, 1);
  EXPECT_EQ(s.kv_heads, 1);
  EXPECT_EQ(s.intermediate_begin, 24);
  EXPECT_EQ(s.intermediate, 24);
  EXPECT_EQ(s.vocab_begin, 32);
  EXPECT_EQ(s.vocab, 32);
  EXPECT_EQ(s.local_config(c).num_key_value_heads, 1);
}

TEST(TpShard, ReplicatesKvHeadsWhenTheyAreFewerThanRanks) {
  ModelConfig c = tiny_config("llama");
  c.num_attention_heads = 8;
  c.num_key_value_heads = 2;  // query heads 0-3 read kv head 0, 4-7 kv head 1
  for (int rank = 0; rank < 4; ++rank) {
    const TpShard s = TpShard::of(c, rank, 4);
    EXPECT_EQ(s.head_begin, 2 * rank);
    EXPECT_EQ(s.kv_heads, 1);
    EXPECT_EQ(s.kv_head_begin, rank / 2) << "rank " << rank;
  }
}

// Qwen3's heads are head_dim wide whatever hidden / heads is, and its
// per-head q/k norms go whole to every rank.
TEST(TpShard, CutsQwen3HeadsOfTheirHeadDimAndKeepsTheQkNormsWhole) {
  const ModelConfig c = tiny_config("qwen3");  // hidden 32; 4 heads and 2 kv heads of 12
  const TpShard s = TpShard::of(c, 1, 2);
  EXPECT_EQ(s.local_config(c).q_size(), 24);
  EXPECT_EQ(s.local_config(c).kv_size(), 12);
  const auto cpu = torch::TensorOptions().dtype(torch::kFloat);
  const LlamaWeights full = random_weights(c, /*seed=*/3, cpu);
  const LlamaWeights part = shard_weights(full, c, s, cpu);
  const DecoderLayerWeights &whole = full.layers[1], &mine = part.layers[1];
  const at::Tensor& qkv = whole.qkv.weight;  // q rows [0, 48), k [48, 72), v [72, 96)
  EXPECT_TRUE(mine.qkv.weight.equal(torch::cat({qkv.narrow(0, 24, 24), qkv.narrow(0, 60, 12), qkv.narrow(0, 84, 12)})));
  EXPECT_TRUE(mine.o.weight.equal(whole.o.weight.narrow(1, 24, 24)));
  EXPECT_TRUE(mine.q_norm.equal(whole.q_norm));
  EXPECT_TRUE(mine.k_norm.equal(whole.k_norm));
}

TEST(TpShard, LastRankHoldsTheShortVocabularyShard) {
  ModelConfig c = tiny_config("llama");
  c.vocab_size = 61;
  const TpShard first = TpShard::of(c, 0, 2), last = TpShard::of(c, 1, 2);
  EXPECT_EQ(first.vocab_stride, 31);
  EXPECT_EQ(first.vocab, 31);
  EXPECT_EQ(last.vocab_begin, 31);
  EXPECT_EQ(last.vocab, 30);
}

TEST(TpShard, TpSizeThatDoesNotDivideTheShapeNamesTheField) {
  ModelConfig c = tiny_config("llama");
  EXPECT_TRUE(throws_error([&] { TpShard::of(c, 0, 3); }, ErrorKind::kInvalidArgument,
                           {"num_attention_heads (4)", "tp size 3"}));
  c.intermediate_size = 50;
  EXPECT_TRUE(throws_error([&] { TpShard::of(c, 0, 4); }, ErrorKind::kInvalidArgument,
                           {"intermediate_size (50)", "tp size 4"}));
  c = tiny_config("llama");
  c.num_attention_heads = 12;
  c.num_key_value_heads = 4;
  c.intermediate_size = 60;
  EXPECT_TRUE(throws_error([&] { TpShard::of(c, 0, 6); }, ErrorKind::kInvalidArgument,
                           {"num_key_value_heads (4)", "tp size 6"}));
  c = tiny_config("llama");
  c.vocab_size = 5;
  EXPECT_TRUE(throws_error([&] { TpShard::of(c, 0, 4); }, ErrorKind::kInvalidArgument,
                           {"vocab_size (5)", "tp size 4"}));
  EXPECT_TRUE(throws_error([&] { TpShard::of(c, 2, 2); }, ErrorKind::kInvalidArgument, {"rank 2", "group of 2"}));
}

}  // namespace
}  // namespace seed::models
