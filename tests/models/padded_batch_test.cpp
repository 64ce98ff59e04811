// The padded layout a forward's index data takes on its way to the device
// (and into a CUDA graph): rows, slots, and the attention mask built from
// them, on a batch that mixes a chain, a tree and padding.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <set>

#include "models/forward_graphs.h"
#include "models/kv_cache.h"
#include "models/padded_batch.h"
#include "models/paged_attention.h"

namespace seed::models {
namespace {

std::vector<int64_t> values(const at::Tensor& t) {
  const at::Tensor c = t.contiguous().to(torch::kLong);
  return {c.data_ptr<int64_t>(), c.data_ptr<int64_t>() + c.numel()};
}

// Sequence 0: 2 cached tokens, a chain of 2 new ones (tokens 7, 8).
// Sequence 1: nothing cached, a tree of 3 nodes (9 <- 10, 9 <- 11).
// Block size 4; sequence 0's blocks are [5], sequence 1's [3].
ForwardPlan mixed_plan() {
  ForwardPlan plan;
  plan.batch = 2;
  plan.seq = 3;
  plan.rows = 5;
  plan.tokens = {7, 8, 9, 10, 11};
  plan.positions = {2, 3, 0, 1, 1};
  plan.write_slots = {22, 23, 12, 13, 14};
  plan.sequence = {0, 0, 1, 1, 1};
  plan.parent_rows = {-1, 0, -1, 2, 2};
  plan.logit_rows = {1, 3, 4};
  plan.first_row = {0, 2, 5};
  plan.cached = {2, 0};
  plan.blocks = {{5}, {3}};
  plan.block_size = 4;
  return plan;
}

TEST(PaddedBatch, LaysOutRowsSlotsAndOutputs) {
  const ForwardPlan plan = mixed_plan();
  EXPECT_EQ(keys_needed(plan), 5);  // sequence 0: 2 cached + 3 rows
  const PaddedBatch padded = pad_batch(plan, {2, 3, 6, false});
  const PaddedBatch::Parts p = padded.parts(padded.data);
  constexpr int64_t kTrash = KvCache::kTrashSlot;
  EXPECT_EQ(values(p.tokens), (std::vector<int64_t>{7, 8, 0, 9, 10, 11}));
  EXPECT_EQ(values(p.positions), (std::vector<int64_t>{2, 3, 2, 0, 1, 1}));
  EXPECT_EQ(values(p.write_slots), (std::vector<int64_t>{22, 23, kTrash, 12, 13, 14}));
  EXPECT_EQ(values(p.key_slots),
            (std::vector<int64_t>{20, 21, 22, 23, kTrash, kTrash, 12, 13, 14, kTrash, kTrash, kTrash}));
  EXPECT_EQ(values(p.cached), (std::vector<int64_t>{2, 0}));
  EXPECT_EQ(values(p.logit_rows), (std::vector<int64_t>{1, 4, 5}));
}

TEST(PaddedBatch, AttentionSeesTheCachedPrefixAndTheTree) {
  const ForwardPlan plan = mixed_plan();
  const PaddedBatch padded = pad_batch(plan, {2, 3, 6, false});
  const at::Tensor allowed = attention_allowed(padded.parts(padded.data), 2, 3, 6);
  ASSERT_EQ(allowed.sizes(), (at::IntArrayRef{2, 1, 3, 6}));
  const std::vector<std::vector<int64_t>> expected = {
      {1, 1, 1, 0, 0, 0},  // sequence 0, token 7: the two cached, itself
      {1, 1, 1, 1, 0, 0},  // token 8: and token 7
      {1, 1, 0, 0, 1, 0},  // padding: the cached two and itself (a trash slot)
      {1, 0, 0, 0, 0, 0},  // sequence 1, root 9
      {1, 1, 0, 0, 0, 0},  // 10: its parent 9
      {1, 0, 1, 0, 0, 0},  // 11: its parent 9, not its sibling 10
  };
  for (int64_t b = 0; b < 2; ++b) {
    for (int64_t s = 0; s < 3; ++s) {
      EXPECT_EQ(values(allowed[b][0][s]), expected[b * 3 + s]) << "sequence " << b << " row " << s;
    }
  }
}

TEST(PaddedBatch, RefusesTooFewKeys) {
  EXPECT_THROW(pad_batch(mixed_plan(), {2, 3, 4, false}), std::exception);  // 5 keys needed
  EXPECT_THROW(pad_batch(mixed_plan(), {1, 3, 6, false}), std::exception);  // 2 sequences
  EXPECT_THROW(pad_batch(mixed_plan(), {2, 2, 6, false}), std::exception);  // 3 rows
}

// A graph's shape: empty sequences after the plan's, padding rows after
// each sequence's, every row an output; the plan's rows picked back out.
TEST(PaddedBatch, PadsToAGraphsShape) {
  const ForwardPlan plan = mixed_plan();
  const PaddedBatch padded = pad_batch(plan, {3, 4, 8, true});
  const PaddedBatch::Parts p = padded.parts(padded.data);
  constexpr int64_t kTrash = KvCache::kTrashSlot;
  EXPECT_EQ(values(p.tokens), (std::vector<int64_t>{7, 8, 0, 0, 9, 10, 11, 0, 0, 0, 0, 0}));
  EXPECT_EQ(values(p.write_slots),
            (std::vector<int64_t>{22, 23, kTrash, kTrash, 12, 13, 14, kTrash, kTrash, kTrash, kTrash, kTrash}));
  EXPECT_EQ(values(p.cached), (std::vector<int64_t>{2, 0, 0}));
  EXPECT_EQ(values(p.logit_rows.narrow(0, 0, 3)), (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(p.logit_rows.numel(), 12);
  EXPECT_EQ(values(p.key_slots.narrow(0, 16, 8)), std::vector<int64_t>(8, kTrash));  // the empty sequence's
  EXPECT_EQ(padded_logit_rows(plan, 4), (std::vector<int64_t>{1, 5, 6}));
  const at::Tensor allowed = attention_allowed(p, 3, 4, 8);
  // An empty sequence's row i attends to its own key position i alone.
  EXPECT_EQ(values(allowed[2][0][1]), (std::vector<int64_t>{0, 1, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(values(allowed[1][0][2]), (std::vector<int64_t>{1, 0, 1, 0, 0, 0, 0, 0}));  // the tree as before
}

TEST(ForwardGraphs, ShapesRoundBatchAndRowsToPowersOfTwo) {
  const std::optional<PaddedShape> shape = graph_shape(3, 5, 40, kGatheredKeyStep);
  ASSERT_TRUE(shape.has_value());
  EXPECT_EQ(shape->batch, 4);
  EXPECT_EQ(shape->seq, 8);
  EXPECT_EQ(shape->keys, 64);  // 40 + 3 padding rows, bucketed
  EXPECT_TRUE(shape->every_row);
  EXPECT_EQ(graph_shape(3, 5, 40, kPagedAttentionSplitKeys)->keys, 256);
  EXPECT_FALSE(graph_shape(2, 200, 300, kGatheredKeyStep).has_value());  // a prompt: 512 rows, eager
}

TEST(ForwardGraphs, GatheredKeyPositionsGrowByAQuarterOfTheirPowerOfTwo) {
  EXPECT_EQ(graph_key_positions(1, kGatheredKeyStep), 64);
  EXPECT_EQ(graph_key_positions(64, kGatheredKeyStep), 64);
  EXPECT_EQ(graph_key_positions(65, kGatheredKeyStep), 128);
  EXPECT_EQ(graph_key_positions(300, kGatheredKeyStep), 320);
  EXPECT_EQ(graph_key_positions(1000, kGatheredKeyStep), 1024);
  EXPECT_EQ(graph_key_positions(1025, kGatheredKeyStep), 1280);
  EXPECT_EQ(graph_key_positions(2049, kGatheredKeyStep), 2560);
  EXPECT_EQ(graph_key_positions(8193, kGatheredKeyStep), 10240);
}

// Paged attention pays for padding only in whole splits of keys: a context
// growing from 1 to 2,048 keys is captured for 8 key counts, not 16.
TEST(ForwardGraphs, PagedKeyPositionsAreWholeSplits) {
  std::set<int64_t> paged, gathered;
  for (int64_t keys = 1; keys <= 2048; ++keys) {
    paged.insert(graph_key_positions(keys, kPagedAttentionSplitKeys));
    gathered.insert(graph_key_positions(keys, kGatheredKeyStep));
  }
  EXPECT_EQ(paged, (std::set<int64_t>{256, 512, 768, 1024, 1280, 1536, 1792, 2048}));
  EXPECT_EQ(gathered.size(), 16u);
  EXPECT_EQ(graph_key_positions(300, kPagedAttentionSplitKeys), 512);
  EXPECT_EQ(graph_key_positions(8193, kPagedAttentionSplitKeys), 10240);  // a quarter of 8,192 past 8,192 keys
}

using Step = CapturedShapes::Step;

// next() for a key, with the key it made the cache forget (-1: none).
std::pair<Step, int64_t> next(CapturedShapes& shapes, int64_t key) {
  std::optional<ForwardGraphs::Key> forgotten;
  const Step step = shapes.next({key}, forgotten);
  return {step, forgotten ? forgotten->at(0) : -1};
}

TEST(CapturedShapes, AShapeRunsEagerlyThenCapturesThenReplays) {
  CapturedShapes shapes(4);
  EXPECT_EQ(next(shapes, 1).first, Step::kEager);
  EXPECT_EQ(next(shapes, 1).first, Step::kCapture);
  shapes.captured({1});
  EXPECT_EQ(next(shapes, 1).first, Step::kReplay);
  EXPECT_EQ(next(shapes, 1).first, Step::kReplay);
  EXPECT_EQ(shapes.warm_ups(), 2);
}

TEST(CapturedShapes, AFailedCaptureIsCapturedAgain) {
  CapturedShapes shapes(4);
  next(shapes, 1);
  EXPECT_EQ(next(shapes, 1).first, Step::kCapture);  // its capture threw: captured() not called
  EXPECT_EQ(next(shapes, 1).first, Step::kCapture);
  EXPECT_EQ(shapes.warm_ups(), 3);
}

TEST(CapturedShapes, PastCapacityTheLeastRecentlyUsedShapeIsForgotten) {
  CapturedShapes shapes(2);
  for (const int64_t key : {1, 2}) {
    next(shapes, key);
    next(shapes, key);
    shapes.captured({key});
  }
  EXPECT_EQ(next(shapes, 1), std::make_pair(Step::kReplay, int64_t{-1}));
  // 2 is the least recently used: 3 takes its place, and 1 keeps its graph.
  EXPECT_EQ(next(shapes, 3), std::make_pair(Step::kEager, int64_t{2}));
  EXPECT_EQ(next(shapes, 1), std::make_pair(Step::kReplay, int64_t{-1}));
  EXPECT_EQ(next(shapes, 2), std::make_pair(Step::kEager, int64_t{3}));  // forgotten: warmed up again
  EXPECT_EQ(shapes.warm_ups(), 6);
}

TEST(ForwardGraphs, NoneOffAGpu) { EXPECT_EQ(make_forward_graphs(c10::Device("cpu")), nullptr); }

}  // namespace
}  // namespace seed::models
