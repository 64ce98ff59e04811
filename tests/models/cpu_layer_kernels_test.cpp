// The CPU layers' kernels: paged attention and SwiGLU's activation equal a
// double-precision reference on every kernel this CPU runs, for grouped,
// multi-query and plain attention, odd head sizes, scattered slots, long
// rows read through block tables, rows that share a prefix, and caches of
// float32 or bfloat16.
#include "models/cpu_layer_kernels.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <tuple>
#include <utility>
#include <vector>

#include "tests/models/supported_kernels.h"

namespace seed::models {
namespace {

using testing::supported_kernels;

// softmax(q k^T / sqrt(dim)) v of one row and query head, in double.
std::vector<double> reference_head(const float* q, const at::Tensor& keys, const at::Tensor& values,
                                   const std::vector<int64_t>& slots, int64_t kv_head, int64_t dim) {
  std::vector<double> scores;
  for (int64_t slot : slots) {
    const float* k = keys.data_ptr<float>() + (slot * keys.size(1) + kv_head) * dim;
    double s = 0;
    for (int64_t d = 0; d < dim; ++d) s += static_cast<double>(q[d]) * k[d];
    scores.push_back(s / std::sqrt(static_cast<double>(dim)));
  }
  double top = scores[0], sum = 0;
  for (double s : scores) top = std::max(top, s);
  for (double& s : scores) sum += (s = std::exp(s - top));
  std::vector<double> out(dim, 0.0);
  for (size_t j = 0; j < slots.size(); ++j) {
    const float* v = values.data_ptr<float>() + (slots[j] * values.size(1) + kv_head) * dim;
    for (int64_t d = 0; d < dim; ++d) out[d] += scores[j] / sum * v[d];
  }
  return out;
}

using AttentionShape = std::tuple<int64_t, int64_t, int64_t>;  // heads, kv heads, head dim

// Every kernel on one thread, the best on two and three.
std::vector<std::pair<CpuKernel, int>> kernels_and_threads() {
  std::vector<std::pair<CpuKernel, int>> out;
  for (CpuKernel kernel : supported_kernels()) out.emplace_back(kernel, 1);
  out.emplace_back(best_cpu_kernel(), 2);
  out.emplace_back(best_cpu_kernel(), 3);
  return out;
}

// paged_attention's output for `rows` (queries from q, q_stride apart) over
// a cache of kv_dtype holding keys and values ([pool, kv_heads, dim]).
at::Tensor attend(CpuKernel kernel, const AttentionRows& rows, const float* q, int64_t q_stride, const at::Tensor& keys,
                  const at::Tensor& values, KvDtype kv_dtype, int64_t heads, int64_t kv_heads, int64_t dim) {
  at::Tensor out = torch::full({rows.count(), heads * dim}, -7.0f);
  PagedAttentionArgs args;
  args.q = q;
  args.q_stride = q_stride;
  args.keys = keys.data_ptr();
  args.values = values.data_ptr();
  args.kv_dtype = kv_dtype;
  args.heads = heads;
  args.kv_heads = kv_heads;
  args.dim = dim;
  args.rows = &rows;
  args.out = out.data_ptr<float>();
  paged_attention(kernel, args);
  return out;
}

// Runs paged attention over random keys, values and queries for `rows` on
// every kernel, from a float32 cache and from a bfloat16 one, and compares
// each output with reference_head. The keys and values are bfloat16
// numbers, so both caches hold the same values.
void expect_reference(const AttentionRows& rows, int64_t heads, int64_t kv_heads, int64_t dim, int64_t pool,
                      int64_t q_stride) {
  const int64_t rows_count = rows.count();
  const at::Tensor keys_bf16 = (torch::randn({pool, kv_heads, dim}) * 2).to(torch::kBFloat16);
  const at::Tensor values_bf16 = torch::randn({pool, kv_heads, dim}).to(torch::kBFloat16);
  const at::Tensor keys = keys_bf16.to(torch::kFloat), values = values_bf16.to(torch::kFloat);
  const at::Tensor q = torch::randn({rows_count, q_stride});
  // Threads split a row's kv heads into ranges differently.
  for (const auto& [kernel, threads] : kernels_and_threads()) {
    at::set_num_threads(threads);
    for (KvDtype kv_dtype : {KvDtype::kFloat32, KvDtype::kBFloat16}) {
      const bool bf16 = kv_dtype == KvDtype::kBFloat16;
      const at::Tensor out = attend(kernel, rows, q.data_ptr<float>(), q_stride, bf16 ? keys_bf16 : keys,
                                    bf16 ? values_bf16 : values, kv_dtype, heads, kv_heads, dim);
      for (int64_t r = 0; r < rows_count; ++r) {
        std::vector<int64_t> slots(rows.length(r));
        rows.slots(r, 0, rows.length(r), slots.data());
        for (int64_t h = 0; h < heads; ++h) {
          const std::vector<double> expected = reference_head(q.data_ptr<float>() + r * q_stride + h * dim, keys,
                                                              values, slots, h / (heads / kv_heads), dim);
          for (int64_t d = 0; d < dim; ++d) {
            ASSERT_NEAR(out[r][h * dim + d].item<float>(), expected[d], 1e-5)
                << cpu_kernel_name(kernel) << " on " << threads << " threads, " << (bf16 ? "bfloat16" : "float32")
                << " cache, row " << r << " head " << h << " element " << d;
          }
        }
      }
    }
  }
  at::set_num_threads(1);
}

class PagedAttentionTest : public ::testing::TestWithParam<AttentionShape> {};

TEST_P(PagedAttentionTest, EqualsTheReferenceOnEveryKernel) {
  const auto [heads, kv_heads, dim] = GetParam();
  torch::manual_seed(3);
  const int64_t pool = 97, q_stride = heads * dim + 5;  // strided rows, as in a fused qkv
  // Rows of 1 to 61 slots, scattered over the pool and not in order.
  AttentionRows rows;
  const at::Tensor order = torch::randperm(pool, torch::kLong);
  for (int64_t r = 0; r < 7; ++r) {
    const int64_t n = 1 + (r * 10) % 61;
    std::vector<int64_t> slots;
    for (int64_t j = 0; j < n; ++j) slots.push_back(order[(r * 13 + j * 7) % pool].item<int64_t>());
    rows.add(nullptr, 0, slots.data(), n);
  }
  expect_reference(rows, heads, kv_heads, dim, pool, q_stride);
}

// Rows as the cache gives them: hundreds of positions through a block table
// whose blocks are out of order (many online-softmax steps), then a few
// scattered slots (a tree node's ancestors).
TEST_P(PagedAttentionTest, LongRowsThroughABlockTableEqualTheReference) {
  const auto [heads, kv_heads, dim] = GetParam();
  torch::manual_seed(4);
  const int64_t block_size = 4, blocks = 100, pool = blocks * block_size, q_stride = heads * dim;
  const at::Tensor order = torch::randperm(blocks, torch::kInt);
  const std::vector<int32_t> table(order.data_ptr<int32_t>(), order.data_ptr<int32_t>() + blocks);
  AttentionRows rows;
  rows.block_size = block_size;
  for (int64_t prefix : {1, 63, 64, 65, 200, 397}) {
    const std::vector<int64_t> extra = {5, 17, 3};
    rows.add(table.data(), prefix, extra.data(), prefix % 2 ? 0 : 3);
  }
  expect_reference(rows, heads, kv_heads, dim, pool, q_stride);
}

// A verified chain's rows and a tree's (one block table, prefixes of
// hundreds of positions, some rows with ancestors as extra slots) beside
// another sequence's: attended together, they equal the reference, and
// each row gives the same bits as when it is attended alone. Alone, a
// row's query heads fill the kernel's tiles of readers by themselves; in a
// group, a tile may hold heads of neighbouring rows (3 query heads per kv
// head: tiles of 4 and 2 take heads of two rows, at other places than alone).
TEST_P(PagedAttentionTest, RowsSharingAPrefixEqualEachRowAlone) {
  const auto [heads, kv_heads, dim] = GetParam();
  torch::manual_seed(5);
  const int64_t block_size = 16, blocks = 64, pool = blocks * block_size, q_stride = heads * dim;
  const at::Tensor order = torch::randperm(blocks, torch::kInt);
  const std::vector<int32_t> table(order.data_ptr<int32_t>(), order.data_ptr<int32_t>() + 40);
  const std::vector<int32_t> other(order.data_ptr<int32_t>() + 40, order.data_ptr<int32_t>() + blocks);
  AttentionRows rows;
  rows.block_size = block_size;
  for (int64_t i = 1; i <= 20; ++i) rows.add(table.data(), 300 + i, nullptr, 0);  // a chain after 300
  rows.add(other.data(), 130, nullptr, 0);
  const std::vector<int64_t> ancestors = {table[30] * block_size + 2, table[31] * block_size + 9, 7};
  for (int64_t i = 1; i <= 3; ++i) rows.add(table.data(), 257, ancestors.data(), i);  // a tree after 257
  for (int64_t i = 1; i <= 3; ++i) rows.add(other.data(), 64 * i, nullptr, 0);
  expect_reference(rows, heads, kv_heads, dim, pool, q_stride);

  const at::Tensor keys = (torch::randn({pool, kv_heads, dim}) * 2).to(torch::kBFloat16);
  const at::Tensor values = torch::randn({pool, kv_heads, dim}).to(torch::kBFloat16);
  const at::Tensor q = torch::randn({rows.count(), q_stride});
  for (const auto& [kernel, threads] : kernels_and_threads()) {
    at::set_num_threads(threads);
    const auto attend_bf16 = [&](const AttentionRows& attended, const float* q_rows) {
      return attend(kernel, attended, q_rows, q_stride, keys, values, KvDtype::kBFloat16, heads, kv_heads, dim);
    };
    const at::Tensor together = attend_bf16(rows, q.data_ptr<float>());
    for (int64_t r = 0; r < rows.count(); ++r) {
      AttentionRows alone;
      alone.block_size = block_size;
      alone.add(rows.tables[r], rows.prefix[r], rows.extra.data() + rows.begin[r], rows.begin[r + 1] - rows.begin[r]);
      const at::Tensor single = attend_bf16(alone, q.data_ptr<float>() + r * q_stride);
      ASSERT_TRUE(torch::equal(together[r], single[0]))
          << cpu_kernel_name(kernel) << " on " << threads << " threads, row " << r << ": largest difference "
          << (together[r] - single[0]).abs().max().item<float>();
    }
  }
  at::set_num_threads(1);
}

INSTANTIATE_TEST_SUITE_P(Shapes, PagedAttentionTest,
                         ::testing::Values(AttentionShape{6, 2, 64}, AttentionShape{6, 2, 32},
                                           AttentionShape{4, 4, 16}, AttentionShape{16, 1, 24},
                                           AttentionShape{8, 2, 20}, AttentionShape{3, 1, 7},
                                           AttentionShape{4, 2, 128}),  // Qwen3's and Llama 3's head size
                         [](const auto& info) {
                           return std::to_string(std::get<0>(info.param)) + "q" +
                                  std::to_string(std::get<1>(info.param)) + "kv" +
                                  std::to_string(std::get<2>(info.param)) + "d";
                         });

TEST(SiluMulTest, EqualsTheReferenceOnEveryKernelIncludingExtremes) {
  torch::manual_seed(4);
  at::Tensor gate = torch::randn({1000}) * 8;
  gate[0] = 0.0f;
  gate[1] = 120.0f;    // exp(-120) underflows; silu is the identity
  gate[2] = -120.0f;   // silu is -0
  gate[3] = -87.5f;
  const at::Tensor up = torch::randn({1000});
  for (CpuKernel kernel : supported_kernels()) {
    at::Tensor out = gate.clone();
    silu_mul(kernel, out.data_ptr<float>(), up.data_ptr<float>(), out.numel());
    for (int64_t i = 0; i < gate.numel(); ++i) {
      const double g = gate[i].item<float>();
      const double expected = g / (1.0 + std::exp(-g)) * up[i].item<float>();
      ASSERT_NEAR(out[i].item<float>(), expected, 1e-6 * (1.0 + std::fabs(expected)))
          << cpu_kernel_name(kernel) << " element " << i << " gate " << g;
    }
  }
}

}  // namespace
}  // namespace seed::models
