// bench attention reads a cache as the model keeps it: bfloat16 keys and
// values for bfloat16 matrices, float32 for float32 ones; a row per context
// and row count, in order.
#include "bench/attention_bench.h"

#include <gtest/gtest.h>

namespace seed::bench {
namespace {

// Bytes of keys and values one forward's attention reads, per entry of the cache.
double bytes_per_entry(const AttentionBenchRow& row, const models::ModelConfig& c) {
  return row.bytes_per_s * row.seconds / (2.0 * c.num_hidden_layers * (row.context + row.rows) *
                                          c.num_key_value_heads * c.head_dim);
}

TEST(AttentionBenchTest, ReadsTheCacheInTheModelsKvDtype) {
  auto bf16 = models::CausalLM::load(SEED_ZOO_DIR "/tiny-target");  // bfloat16 matrices as shipped
  const std::vector<AttentionBenchRow> rows = run_attention_bench(*bf16, {40, 100}, {1, 3}, /*repeats=*/1);
  ASSERT_EQ(rows.size(), 4u);
  const std::vector<std::pair<int64_t, int64_t>> expected = {{40, 1}, {40, 3}, {100, 1}, {100, 3}};
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(std::make_pair(rows[i].context, rows[i].rows), expected[i]) << i;
    EXPECT_DOUBLE_EQ(bytes_per_entry(rows[i], bf16->config()), 2.0) << i;
  }

  models::LoadOptions float32;
  float32.weights_dtype = models::WeightDtype::kFloat32;
  auto f32 = models::CausalLM::load(SEED_ZOO_DIR "/tiny-target", float32);
  const std::vector<AttentionBenchRow> wide = run_attention_bench(*f32, {40}, {2}, /*repeats=*/1);
  ASSERT_EQ(wide.size(), 1u);
  EXPECT_DOUBLE_EQ(bytes_per_entry(wide[0], f32->config()), 4.0);
}

}  // namespace
}  // namespace seed::bench
