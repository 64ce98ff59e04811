// Paged attention's CUDA block code (models/cuda/paged_attention_blocks.cuh)
// computes what attention over gathered, masked keys computes: run on the
// CPU under an emulation of CUDA's block primitives, for chains and trees,
// grouped heads, strided queries, padding rows, several splits of the key
// positions, and float32 and bfloat16 elements. (tests/models/cuda_test.cpp
// runs the kernels themselves on a GPU.)
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "models/cuda/paged_attention_args.h"
#include "tests/models/cuda_block_emulation.h"

namespace seed::models::cuda {

// bfloat16 as the kernels store it: the top half of a float, rounded to
// nearest even.
struct Bfloat16 {
  uint16_t bits = 0;
};

inline float load(const float* p) { return *p; }
inline void store(float* p, float x) { *p = x; }
inline float load(const Bfloat16* p) {
  const uint32_t wide = static_cast<uint32_t>(p->bits) << 16;
  float x;
  std::memcpy(&x, &wide, sizeof x);
  return x;
}
inline void store(Bfloat16* p, float x) {
  uint32_t wide;
  std::memcpy(&wide, &x, sizeof wide);
  p->bits = static_cast<uint16_t>((wide + 0x7fff + ((wide >> 16) & 1)) >> 16);
}

template <typename T>
void load_vector(const T* p, float* out) {
  for (int j = 0; j < kVectorElements; ++j) out[j] = load(p + j);
}

}  // namespace seed::models::cuda

#include "models/cuda/paged_attention_blocks.cuh"

namespace seed::models::cuda {
namespace {

struct Case {
  int batch, seq, heads, kv_heads, dim, key_positions;
  std::vector<int> cached;  // per sequence
  bool trees;               // random ancestors, else chains
};

void PrintTo(const Case& c, std::ostream* os) {
  *os << "B" << c.batch << " S" << c.seq << " H" << c.heads << "/" << c.kv_heads << " D" << c.dim << " T"
      << c.key_positions << (c.trees ? " trees" : " chains");
}

template <typename T>
std::vector<T> random_elements(size_t n, std::mt19937& rng) {
  std::normal_distribution<float> normal;
  std::vector<T> out(n);
  for (T& x : out) store(&x, normal(rng));
  return out;
}

// How a launch reads: on a GPU of this many multiprocessors (which sets how
// many key positions a block reads), keys kVectorElements at a time where
// the head's size allows.
struct Reading {
  int multiprocessors;
  bool vector_loads;
};

// The attention of every (row, head), attended by the launch of
// launch_paged_attention (paged_attention.cu), and by the definition:
// softmax(q k / sqrt(D)) v over a sequence's cached positions and the new
// positions its tree row allows, keys read through the slot table.
template <typename T>
double worst_difference(const Case& c, Reading reading, uint32_t seed) {
  std::mt19937 rng(seed);
  const int B = c.batch, S = c.seq, H = c.heads, Hkv = c.kv_heads, D = c.dim, T_ = c.key_positions;
  const int64_t stride = (H + 2 * Hkv) * D;  // queries as a view of a fused q/k/v projection
  const int64_t slots = 1 + static_cast<int64_t>(B) * T_;  // slot 0: the trash slot
  const std::vector<T> q = random_elements<T>(B * S * stride, rng);
  const std::vector<T> keys = random_elements<T>(slots * Hkv * D, rng);
  const std::vector<T> values = random_elements<T>(slots * Hkv * D, rng);
  std::vector<int64_t> pool_order(slots - 1);
  for (size_t i = 0; i < pool_order.size(); ++i) pool_order[i] = 1 + static_cast<int64_t>(i);
  std::shuffle(pool_order.begin(), pool_order.end(), rng);  // blocks scattered through the pool
  std::vector<int64_t> key_slots(B * T_), cached(c.cached.begin(), c.cached.end()), tree(B * S * S, 0);
  for (int b = 0; b < B; ++b) {
    const int rows = b == 1 && S > 1 ? S - 1 : S;  // sequence 1 ends in a padding row
    for (int p = 0; p < T_; ++p) key_slots[b * T_ + p] = p < cached[b] + rows ? pool_order[b * T_ + p] : 0;
    for (int i = 0; i < S; ++i) {
      int64_t* row = &tree[(b * S + i) * S];
      row[i] = 1;
      for (int j = 0; j < i && i < rows; ++j) row[j] = c.trees ? static_cast<int64_t>(rng() % 2) : 1;
    }
  }
  const int64_t row_heads = static_cast<int64_t>(B) * S * H;
  std::vector<T> out(row_heads * D);
  PagedAttentionArgs a;
  a.q = q.data();
  a.q_row_stride = stride;
  a.keys = keys.data();
  a.values = values.data();
  a.key_slots = key_slots.data();
  a.cached = cached.data();
  a.tree = tree.data();
  a.out = out.data();
  a.batch = B;
  a.seq = S;
  a.key_positions = T_;
  a.heads = H;
  a.kv_heads = Hkv;
  a.dim = D;
  a.scale = 1.0f / std::sqrt(static_cast<float>(D));
  a.split_keys = choose_split_keys(a, reading.multiprocessors);
  a.vector_loads = reading.vector_loads && D % kVectorElements == 0;
  const AttendGrid grid = attend_grid(a);
  std::vector<float> split_buffers(grid.splits * row_heads * (D + 2), std::nanf(""));
  a.split_out = split_buffers.data();
  a.split_max = a.split_out + grid.splits * row_heads * D;
  a.split_sum = a.split_max + grid.splits * row_heads;
  const testing::BlockIndex attend = {static_cast<unsigned>(grid.sequence_heads * grid.row_tiles),
                                      static_cast<unsigned>(grid.splits), 1};
  testing::run_grid(attend, kThreads, grid.shared_bytes / sizeof(float),
                    [&](float* shared) { attend_split<T>(a, grid.tile_keys, shared); });
  if (grid.splits > 1) {
    testing::run_grid({static_cast<unsigned>(row_heads), 1, 1}, kThreads, 0,
                      [&](float*) { combine_split<T>(a, grid.splits); });
  }

  double worst = 0;
  for (int b = 0; b < B; ++b) {
    for (int i = 0; i < S; ++i) {
      for (int h = 0; h < H; ++h) {
        const int kv = h / (H / Hkv);
        std::vector<double> weight(T_, 0.0);
        double top = -INFINITY;
        for (int p = 0; p < T_; ++p) {
          const int64_t relative = p - cached[b];
          if (relative >= 0 && (relative >= S || tree[(b * S + i) * S + relative] == 0)) continue;
          double score = 0;
          for (int d = 0; d < D; ++d) {
            score += static_cast<double>(load(&q[(b * S + i) * stride + h * D + d])) *
                     load(&keys[(key_slots[b * T_ + p] * Hkv + kv) * D + d]);
          }
          weight[p] = score / std::sqrt(static_cast<double>(D));
          top = std::max(top, weight[p]);
        }
        double sum = 0;
        for (int p = 0; p < T_; ++p) {
          const int64_t relative = p - cached[b];
          const bool attended = relative < 0 || (relative < S && tree[(b * S + i) * S + relative] != 0);
          weight[p] = attended ? std::exp(weight[p] - top) : 0.0;
          sum += weight[p];
        }
        for (int d = 0; d < D; ++d) {
          double expected = 0;
          for (int p = 0; p < T_; ++p) {
            if (weight[p] > 0) expected += weight[p] / sum * load(&values[(key_slots[b * T_ + p] * Hkv + kv) * D + d]);
          }
          const double got = load(&out[((b * S + i) * H + h) * D + d]);
          worst = std::max(worst, std::isfinite(got) ? std::abs(got - expected) : INFINITY);
        }
      }
    }
  }
  return worst;
}

class PagedAttentionBlocksTest : public ::testing::TestWithParam<Case> {};

// One multiprocessor: splits of kMaxSplitKeys, read an element at a time;
// 132 (an H100's): splits as short as kMinSplitKeys where a forward has
// few blocks, read in vectors.
constexpr Reading kOneElementAtATime = {1, false}, kInVectors = {132, true};

TEST_P(PagedAttentionBlocksTest, Float32EqualsAttentionOverGatheredMaskedKeys) {
  EXPECT_LT(worst_difference<float>(GetParam(), kOneElementAtATime, 1), 1e-5);
  EXPECT_LT(worst_difference<float>(GetParam(), kInVectors, 1), 1e-5);
}

TEST_P(PagedAttentionBlocksTest, Bfloat16EqualsItWithinTheOutputsRounding) {
  // Outputs of magnitude ~1 in bfloat16: 1/128 apart.
  EXPECT_LT(worst_difference<Bfloat16>(GetParam(), kInVectors, 2), 2e-2);
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, PagedAttentionBlocksTest,
    ::testing::Values(Case{1, 1, 8, 2, 64, 16, {15}, false},             // a decode step
                      Case{3, 1, 8, 2, 64, 80, {0, 40, 79}, false},      // a batch of them
                      Case{2, 5, 8, 2, 64, 48, {0, 43}, true},           // trees to verify, a padding row
                      Case{1, 16, 4, 4, 80, 272, {256}, true},           // two splits, a head of 80
                      Case{2, 4, 4, 1, 256, 520, {516, 10}, true},       // three; one sequence ends in the first
                      Case{1, 2, 12, 4, 128, 300, {298}, false},         // groups of three heads
                      Case{1, 3, 4, 2, 12, 90, {87}, true}));            // a head of 12: no vector loads

TEST(PagedAttentionSplitsTest, ABlockReadsFewerKeysWhereAForwardHasTooFewBlocksForTheGpu) {
  // On 132 multiprocessors, 528 blocks are wanted.
  PagedAttentionArgs a;
  a.batch = 1, a.seq = 1, a.heads = 32, a.kv_heads = 8, a.dim = 64;  // a decode step of the Llama-3.2-1B shape
  a.key_positions = 2048;                                             // 8 blocks a split: 66 splits wanted
  EXPECT_EQ(choose_split_keys(a, 132), kMinSplitKeys);                // 32 splits, where 256 keys made 8
  a.key_positions = 8192;
  EXPECT_EQ(choose_split_keys(a, 132), 128);  // 125 keys, in whole tiles: 64 splits
  a.key_positions = 32768;
  EXPECT_EQ(choose_split_keys(a, 132), kMaxSplitKeys);
  a.batch = 16, a.key_positions = 4096;  // 128 blocks a split: 5 splits wanted
  EXPECT_EQ(choose_split_keys(a, 132), kMaxSplitKeys);
  a.batch = 1, a.seq = 4, a.key_positions = 8192;  // 4 rows to verify: 2 row tiles a kv head, 16 blocks a split
  EXPECT_EQ(choose_split_keys(a, 132), kMaxSplitKeys);  // 33 splits wanted: 249 keys
  a.key_positions = 4096;
  EXPECT_EQ(choose_split_keys(a, 132), 128);  // 125 keys
  a.seq = 1, a.key_positions = 16;
  EXPECT_EQ(choose_split_keys(a, 132), kMinSplitKeys);
  EXPECT_EQ(paged_attention_splits(a), 1);
}

}  // namespace
}  // namespace seed::models::cuda
