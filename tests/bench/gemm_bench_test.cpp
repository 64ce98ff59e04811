// bench gemm measures a model as `seed` loads it: weights held only as
// packed panels (no [out, in] parameter beside them).
#include "bench/gemm_bench.h"

#include <gtest/gtest.h>

namespace seed::bench {
namespace {

TEST(GemmBenchTest, MeasuresAModelHoldingOnlyPackedWeights) {
  auto model = models::CausalLM::load(SEED_ZOO_DIR "/tiny-target");
  ASSERT_FALSE(model->weights().layers[0].qkv.weight.defined());
  const std::vector<GemmBenchRow> rows = run_gemm_bench(*model, {1, 3}, /*repeats=*/1);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].rows, 1);
  EXPECT_EQ(rows[1].rows, 3);
}

}  // namespace
}  // namespace seed::bench
