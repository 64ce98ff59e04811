// KvCache bookkeeping: blocks are shared, copied on write, freed and bounded.
#include "models/kv_cache.h"

#include <gtest/gtest.h>
#include <torch/torch.h>
#include <unistd.h>

#include <fstream>

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

// `n` tokens counting up from `first` (their content only matters for prefixes).
std::vector<int32_t> tokens(int64_t n, int32_t first = 1) {
  std::vector<int32_t> out(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) out[i] = first + static_cast<int32_t>(i);
  return out;
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
  cache.extend(seq, tokens(9));  // three blocks
  EXPECT_EQ(cache.bytes_in_use(), 3 * kBlock * cache.bytes_per_token());
  cache.truncate(seq, 4);
  EXPECT_EQ(cache.length(seq), 4);
  EXPECT_EQ(cache.bytes_in_use(), 1 * kBlock * cache.bytes_per_token());
  EXPECT_THROW(cache.truncate(seq, 5), Error);
}

TEST(KvCacheTest, PoolGrowthKeepsContents) {
  KvCache cache = make_cache();
  const SequenceId seq = cache.create();
  std::vector<int64_t> slots = cache.extend(seq, tokens(3));
  write(cache, slots, 1.5f);
  const SequenceId other = cache.create();
  write(cache, cache.extend(other, tokens(40)), 2.5f);  // forces the pool to double twice
  EXPECT_EQ(read_keys(cache, seq), std::vector<float>(3, 1.5f));
  EXPECT_EQ(read_keys(cache, other), std::vector<float>(40, 2.5f));
}

// The CPU pool reserves room for the model's context up front; past it, it
// moves to a larger pool, and nothing written is lost either way.
TEST(KvCacheTest, GrowingPastTheReservedRoomKeepsContents) {
  ModelConfig config = testing::tiny_config("llama");
  config.max_position_embeddings = 2 * kBlock;  // room for the trash block and two more
  KvCache cache(config, torch::TensorOptions().dtype(torch::kFloat), {kBlock, /*initial_blocks=*/1});
  const SequenceId seq = cache.create();
  std::vector<float> expected;
  for (int32_t step = 0; step < 30; ++step) {  // 30 blocks, one at a time
    write(cache, cache.extend(seq, tokens(kBlock, step * kBlock)), static_cast<float>(step));
    expected.insert(expected.end(), kBlock, static_cast<float>(step));
  }
  EXPECT_EQ(read_keys(cache, seq), expected);
  EXPECT_GE(cache.keys(0).size(0), 31 * kBlock);
}

// Resident pages of this process (Linux).
int64_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  int64_t size = 0, resident = 0;
  statm >> size >> resident;
  return resident * sysconf(_SC_PAGESIZE);
}

// A pool reserved for a long context takes memory only for the blocks
// written: here 1 GiB of room, of which a few blocks are used.
TEST(KvCacheTest, TheReservedRoomTakesMemoryOnlyWhereWritten) {
  ModelConfig config = testing::tiny_config("llama");
  KvCache probe(config, torch::TensorOptions().dtype(torch::kFloat), {kBlock});
  config.max_position_embeddings = (int64_t{1} << 30) / probe.bytes_per_token();
  const int64_t before = resident_bytes();
  KvCache cache(config, torch::TensorOptions().dtype(torch::kFloat), {kBlock});
  const SequenceId seq = cache.create();
  write(cache, cache.extend(seq, tokens(10 * kBlock)), 2.0f);
  EXPECT_EQ(read_keys(cache, seq), std::vector<float>(10 * kBlock, 2.0f));
  EXPECT_LT(resident_bytes() - before, int64_t{64} << 20);
}

TEST(KvCacheTest, ForkCopiesOnlyTheSharedBlockItWritesInto) {
  KvCache cache = make_cache();
  const SequenceId parent = cache.create();
  write(cache, cache.extend(parent, tokens(6)), 1.0f);  // blocks: [full][2 of 4]
  const SequenceId child = cache.fork(parent);
  EXPECT_EQ(cache.bytes_in_use(), 2 * kBlock * cache.bytes_per_token());
  write(cache, cache.extend(child, tokens(1)), 2.0f);
  write(cache, cache.extend(parent, tokens(1)), 3.0f);
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
  write(cache, cache.extend(seq, tokens(2)), 9.0f);
  const std::vector<int64_t> nodes = cache.extend(seq, tokens(5));
  for (int64_t i = 0; i < 5; ++i) write(cache, {nodes[i]}, static_cast<float>(i));
  cache.commit_path(seq, 2, {1, 3, 4});
  EXPECT_EQ(read_keys(cache, seq), (std::vector<float>{9, 9, 1, 3, 4}));
  EXPECT_THROW(cache.commit_path(seq, 2, {1, 1}), Error);  // not strictly increasing
}

TEST(KvCacheTest, FullCacheIsAnOutOfRangeError) {
  KvCache cache = make_cache(/*max_blocks=*/3);
  const SequenceId seq = cache.create();
  cache.extend(seq, tokens(12));
  try {
    cache.extend(seq, tokens(1));
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kOutOfRange);
    EXPECT_NE(std::string(e.what()).find("max_blocks"), std::string::npos) << e.what();
  }
}

// A sequence of `n` tokens whose keys are `value`, published.
SequenceId computed(KvCache& cache, const std::vector<int32_t>& content, float value) {
  const SequenceId seq = cache.create();
  write(cache, cache.extend(seq, content), value);
  cache.publish(seq);
  return seq;
}

TEST(KvCacheTest, NewSequenceStartsFromTheLongestPublishedPrefix) {
  KvCache cache = make_cache();
  computed(cache, tokens(10), 1.0f);  // blocks [1..4][5..8] named, [9 10] partial
  const CachedStart start = cache.create_with_prefix(tokens(12));
  EXPECT_EQ(start.cached, 8);
  EXPECT_EQ(read_keys(cache, start.sequence), std::vector<float>(8, 1.0f));
  // At least one token is left to compute: an 8-token prompt reuses one block.
  EXPECT_EQ(cache.create_with_prefix(tokens(8)).cached, 4);
  // A prompt that differs inside the second block reuses only the first.
  std::vector<int32_t> other = tokens(12);
  other[5] = 99;
  EXPECT_EQ(cache.create_with_prefix(other).cached, 4);
  EXPECT_EQ(cache.create_with_prefix(tokens(12, /*first=*/2)).cached, 0);
}

TEST(KvCacheTest, SharedBlocksAreHeldOnceAndOutliveTheirSequences) {
  KvCache cache = make_cache();
  const SequenceId a = computed(cache, tokens(8), 1.0f);
  const CachedStart b = cache.create_with_prefix(tokens(9));
  ASSERT_EQ(b.cached, 8);
  EXPECT_EQ(cache.bytes_in_use(), 2 * kBlock * cache.bytes_per_token());
  cache.release(a);
  cache.release(b.sequence);
  EXPECT_EQ(cache.bytes_in_use(), 0);  // no live sequence, but the blocks stay named
  const CachedStart c = cache.create_with_prefix(tokens(9));
  EXPECT_EQ(c.cached, 8);
  EXPECT_EQ(read_keys(cache, c.sequence), std::vector<float>(8, 1.0f));
}

TEST(KvCacheTest, DivergingFromASharedPrefixCopiesTheBlockItWritesInto) {
  KvCache cache = make_cache();
  const SequenceId a = computed(cache, tokens(8), 1.0f);
  const CachedStart b = cache.create_with_prefix(tokens(9));
  ASSERT_EQ(b.cached, 8);
  cache.truncate(b.sequence, 6);  // into the second shared block
  write(cache, cache.extend(b.sequence, {50, 51}), 2.0f);
  EXPECT_EQ(read_keys(cache, b.sequence), (std::vector<float>{1, 1, 1, 1, 1, 1, 2, 2}));
  EXPECT_EQ(read_keys(cache, a), std::vector<float>(8, 1.0f));
  // The named block still holds the original tokens' keys.
  const CachedStart c = cache.create_with_prefix(tokens(9));
  EXPECT_EQ(c.cached, 8);
  EXPECT_EQ(read_keys(cache, c.sequence), std::vector<float>(8, 1.0f));
}

TEST(KvCacheTest, TreeNodesArePublishedOnlyOnceCommittedAsAChain) {
  KvCache cache = make_cache();
  const SequenceId seq = cache.create();
  cache.extend(seq, tokens(2));
  cache.extend(seq, {3, 4, 30, 40, 5, 6}, /*chain=*/false);  // a tree: not shareable yet
  cache.publish(seq);
  EXPECT_EQ(cache.create_with_prefix(tokens(5)).cached, 0);
  cache.commit_path(seq, 2, {0, 1, 4});  // keeps 3 4 5: the sequence is 1 2 3 4 5
  cache.publish(seq);
  EXPECT_EQ(cache.create_with_prefix(tokens(5)).cached, 4);
}

TEST(KvCacheTest, EvictionTakesOnlyUnheldBlocksTailFirst) {
  KvCache cache = make_cache(/*max_blocks=*/4);
  const SequenceId live = computed(cache, tokens(8), 1.0f);          // 2 blocks, held
  cache.release(computed(cache, tokens(8, /*first=*/100), 2.0f));    // 2 blocks, named, unheld
  const SequenceId fresh = cache.create();
  write(cache, cache.extend(fresh, tokens(4, 500)), 3.0f);  // the pool is full: one block is evicted
  EXPECT_EQ(cache.stats().evicted_blocks, 1);
  EXPECT_EQ(cache.create_with_prefix(tokens(9, 100)).cached, 4);  // the unheld prefix lost its tail
  EXPECT_EQ(cache.create_with_prefix(tokens(9)).cached, 8);       // the held one lost nothing
  EXPECT_EQ(read_keys(cache, live), std::vector<float>(8, 1.0f));
  EXPECT_THROW(cache.extend(fresh, tokens(1, 600)), Error);  // every block is held now
  EXPECT_EQ(read_keys(cache, fresh), std::vector<float>(4, 3.0f));
}

TEST(KvCacheTest, ABudgetInBytesBoundsThePoolAndNeverTheResults) {
  const ModelConfig config = testing::tiny_config("llama");
  KvCache probe(config, torch::TensorOptions().dtype(torch::kFloat), {kBlock});
  const int64_t block_bytes = kBlock * probe.bytes_per_token();
  KvCacheOptions options{kBlock, /*initial_blocks=*/2};
  options.max_bytes = 6 * block_bytes;  // the trash block and 5 others
  KvCache cache(config, torch::TensorOptions().dtype(torch::kFloat), options);
  for (int32_t prompt = 0; prompt < 20; ++prompt) {
    cache.release(computed(cache, tokens(8, 1000 * prompt), static_cast<float>(prompt)));
    const CachedStart again = cache.create_with_prefix(tokens(9, 1000 * prompt));
    EXPECT_EQ(again.cached, 8);
    EXPECT_EQ(read_keys(cache, again.sequence), std::vector<float>(8, static_cast<float>(prompt)));
    cache.release(again.sequence);
  }
  EXPECT_LE(cache.stats().peak_bytes, options.max_bytes);
  EXPECT_GT(cache.stats().evicted_blocks, 0);
  options.max_bytes = block_bytes;  // nothing but the trash block fits
  EXPECT_THROW(KvCache(config, torch::TensorOptions().dtype(torch::kFloat), options), Error);
}

TEST(KvCacheTest, WithoutThePrefixCacheNothingIsShared) {
  KvCache cache(testing::tiny_config("llama"), torch::TensorOptions().dtype(torch::kFloat),
                {kBlock, 2, 0, 0, /*prefix_cache=*/false});
  cache.release(computed(cache, tokens(8), 1.0f));
  EXPECT_EQ(cache.create_with_prefix(tokens(9)).cached, 0);
}

TEST(KvCacheTest, UnknownSequenceIsAnError) {
  KvCache cache = make_cache();
  EXPECT_THROW(cache.length(42), Error);
}

}  // namespace
}  // namespace seed::models
