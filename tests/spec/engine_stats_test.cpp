// The engines' counters: what a target added since a snapshot adds back up
// to its totals, as a remote target's counters travel (parallel/wire.h).
#include <gtest/gtest.h>

#include "spec/api/engine.h"

namespace seed::spec {
namespace {

PrefillStats totals(int64_t base) {
  PrefillStats s;
  s.prompt_tokens = base + 1;
  s.computed_tokens = base + 2;
  s.kv_peak_bytes = base + 3;
  s.kv_live_bytes = base + 4;
  s.evicted_blocks = base + 5;
  s.verify_rounds = base + 6;
  s.forward_s = static_cast<double>(base) + 0.5;
  s.host_verify_s = static_cast<double>(base) + 0.25;
  s.graph_warm_ups = base + 7;
  return s;
}

void expect_equal(const PrefillStats& got, const PrefillStats& want) {
  EXPECT_EQ(got.prompt_tokens, want.prompt_tokens);
  EXPECT_EQ(got.computed_tokens, want.computed_tokens);
  EXPECT_EQ(got.kv_peak_bytes, want.kv_peak_bytes);
  EXPECT_EQ(got.kv_live_bytes, want.kv_live_bytes);
  EXPECT_EQ(got.evicted_blocks, want.evicted_blocks);
  EXPECT_EQ(got.verify_rounds, want.verify_rounds);
  EXPECT_EQ(got.forward_s, want.forward_s);
  EXPECT_EQ(got.host_verify_s, want.host_verify_s);
  EXPECT_EQ(got.graph_warm_ups, want.graph_warm_ups);
}

TEST(PrefillStatsTest, WhatWasAddedSinceASnapshotAddsUpToTheTotals) {
  const PrefillStats earlier = totals(100), later = totals(1000);
  const PrefillStats added = later.since(earlier);
  EXPECT_EQ(added.verify_rounds, 900);
  EXPECT_EQ(added.graph_warm_ups, 900);
  EXPECT_EQ(added.forward_s, 900.0);
  EXPECT_EQ(added.kv_live_bytes, later.kv_live_bytes);  // a level, not a count
  PrefillStats carried = earlier;
  carried += added;
  expect_equal(carried, later);
}

}  // namespace
}  // namespace seed::spec
