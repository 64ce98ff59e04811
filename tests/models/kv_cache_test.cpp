// KvCache bookkeeping: blocks are shared, copied on write, freed and bounded.
#include "models/kv_cache.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "models/base/error.h"
#include "tests/models/tiny_models.h"

namespace seed::models {
namespace {

constexpr int64_t kBlock = 4;

KvCache make_cache(int64_t max_blocks = 0) {
  return KvCache(testing::tiny_config("llama"), torch::TensorOptions().dtype(torch::kFloat),
                 {kBlock, /*initial_blocks=*/2, max_blocks});
}

// Writes `value` into every layer's key of each slot (what a forward does).
void write(KvCache& cache, const std::vector<int64_t>& slots, float value) {
  for (int64_t slot : slots) cache.keys(0)[slot].fill_(value);
}

std::vector<float> read_keys(const KvCache& cache, SequenceId seq) {
  std::vector<int64_t> slots;
  cache.append_slots(seq, slots);
  std::vector<float> out;
  for (int64_t slot : slots) out.push_back(cache.keys(0)[slot][0][0].item<float>());
  return out;
}

TEST(KvCacheTest, ExtendAllocatesWholeBlocksAndTruncateFreesThem) {
  KvCache cache = make_cache();
  const SequenceId seq = cache.create();
  cache.extend(seq, 9);  // three blocks
  EXPECT_EQ(cache.bytes_in_use(), 3 * kBlock * cache.bytes_per_token());
  cache.truncate(seq, 4);
  EXPECT_EQ(cache.length(seq), 4);
  EXPECT_EQ(cache.bytes_in_use(), 1 * kBlock * cache.bytes_per_token());
  EXPECT_THROW(cache.truncate(seq, 5), Error);
}

TEST(KvCacheTest, PoolGrowthKeepsContents) {
  KvCache cache = make_cache();
  const SequenceId seq = cache.create();
  std::vector<int64_t> slots = cache.extend(seq, 3);
  write(cache, slots, 1.5f);
  const SequenceId other = cache.create();
  write(cache, cache.extend(other, 40), 2.5f);  // forces the pool to double twice
  EXPECT_EQ(read_keys(cache, seq), std::vector<float>(3, 1.5f));
  EXPECT_EQ(read_keys(cache, other), std::vector<float>(40, 2.5f));
}

TEST(KvCacheTest, ForkCopiesOnlyTheSharedBlockItWritesInto) {
  KvCache cache = make_cache();
  const SequenceId parent = cache.create();
  write(cache, cache.extend(parent, 6), 1.0f);  // blocks: [full][2 of 4]
  const SequenceId child = cache.fork(parent);
  EXPECT_EQ(cache.bytes_in_use(), 2 * kBlock * cache.bytes_per_token());
  write(cache, cache.extend(child, 1), 2.0f);
  write(cache, cache.extend(parent, 1), 3.0f);
  EXPECT_EQ(read_keys(cache, child), (std::vector<float>{1, 1, 1, 1, 1, 1, 2}));
  EXPECT_EQ(read_keys(cache, parent), (std::vector<float>{1, 1, 1, 1, 1, 1, 3}));
  EXPECT_EQ(cache.bytes_in_use(), 3 * kBlock * cache.bytes_per_token());
  cache.release(parent);
  EXPECT_EQ(read_keys(cache, child), (std::vector<float>{1, 1, 1, 1, 1, 1, 2}));
  EXPECT_EQ(cache.bytes_in_use(), 2 * kBlock * cache.bytes_per_token());
}

TEST(KvCacheTest, CommitPathMovesTheAcceptedNodesIntoPlace) {
  KvCache cache = make_cache();
  const SequenceId seq = cache.create();
  write(cache, cache.extend(seq, 2), 9.0f);
  const std::vector<int64_t> nodes = cache.extend(seq, 5);
  for (int64_t i = 0; i < 5; ++i) write(cache, {nodes[i]}, static_cast<float>(i));
  cache.commit_path(seq, 2, {1, 3, 4});
  EXPECT_EQ(read_keys(cache, seq), (std::vector<float>{9, 9, 1, 3, 4}));
  EXPECT_THROW(cache.commit_path(seq, 2, {1, 1}), Error);  // not strictly increasing
}

TEST(KvCacheTest, FullCacheIsAnOutOfRangeError) {
  KvCache cache = make_cache(/*max_blocks=*/3);
  const SequenceId seq = cache.create();
  cache.extend(seq, 12);
  try {
    cache.extend(seq, 1);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kOutOfRange);
    EXPECT_NE(std::string(e.what()).find("max_blocks"), std::string::npos) << e.what();
  }
}

TEST(KvCacheTest, UnknownSequenceIsAnError) {
  KvCache cache = make_cache();
  EXPECT_THROW(cache.length(42), Error);
  EXPECT_FALSE(cache.contains(42));
}

}  // namespace
}  // namespace seed::models
