// A model split over a tensor-parallel group against the whole model: the
// logits of both, step by step, within a tolerance (what each backend's
// sums in other orders allow).
#pragma once

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "models/causal_lm.h"

namespace seed::models::testing {

inline void expect_close(const at::Tensor& tp, const at::Tensor& whole, double tolerance, const std::string& what) {
  ASSERT_EQ(tp.sizes(), whole.sizes()) << what;
  const double diff = (tp - whole).abs().max().item<double>();
  EXPECT_LE(diff, tolerance) << what << ": largest difference " << diff;
}

// Prefill two sequences of different lengths, decode one token each, then
// verify a token tree on one and a chain on the other, comparing every step.
inline void expect_same_logits(CausalLM& tp, CausalLM& whole, double tolerance, const std::string& what) {
  KvCache tp_cache = tp.make_cache({/*block_size=*/4}), whole_cache = whole.make_cache({/*block_size=*/4});
  const SequenceId a = tp_cache.create(), b = tp_cache.create();
  ASSERT_EQ(whole_cache.create(), a);
  ASSERT_EQ(whole_cache.create(), b);
  const std::vector<std::vector<SequenceInput>> steps = {
      {{a, {1, 5, 9, 2, 59, 33, 7, 8, 40}, {}}, {b, {3, 14, 15, 9, 26}, {}}},
      {{a, {12}, {}}, {b, {58}, {}}},
      {{a, {4, 18, 19, 22, 5}, {-1, 0, 0, 1, -1}}, {b, {2, 7}, {}}},
  };
  const char* names[] = {"prefill", "decode", "tree"};
  for (size_t i = 0; i < steps.size(); ++i) {
    const LogitsFor which = i == 1 ? LogitsFor::kLast : LogitsFor::kAll;
    expect_close(tp.forward(steps[i], tp_cache, which), whole.forward(steps[i], whole_cache, which), tolerance,
                 what + " " + names[i]);
  }
  // The cache holds this rank's kv heads only: its share of them, or the
  // one kv head a rank shares when there are fewer kv heads than ranks.
  const int64_t ranks = tp.shard().size;
  const int64_t kv_heads = whole.config().num_key_value_heads;
  const int64_t local_kv_heads = kv_heads % ranks == 0 ? kv_heads / ranks : 1;
  EXPECT_EQ(tp_cache.bytes_per_token() * kv_heads, whole_cache.bytes_per_token() * local_kv_heads) << what;
}

}  // namespace seed::models::testing
