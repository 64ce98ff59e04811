#include "bench/attention_bench.h"

#include <torch/torch.h>

#include <algorithm>
#include <functional>
#include <vector>

#include "bench/median_seconds.h"
#include "models/base/error.h"
#include "models/cpu_layer_kernels.h"

namespace seed::bench {

std::vector<AttentionBenchRow> run_attention_bench(models::CausalLM& model, const std::vector<int64_t>& contexts,
                                                   const std::vector<int64_t>& row_counts, int repeats) {
  SEED_CHECK(model.tensor_options().device().is_cpu(), kInvalidArgument) << "bench attention measures CPU kernels";
  c10::InferenceMode inference;
  const models::ModelConfig& config = model.config();
  const int64_t heads = model.shard().heads, kv_heads = model.shard().kv_heads, dim = config.head_dim;
  const int64_t layers = config.num_hidden_layers, block_size = 16;
  // The cache the model keeps (bfloat16 for bfloat16 matrices): one block's worth, for its dtype.
  models::KvCacheOptions one_block;
  one_block.initial_blocks = 1;
  const at::ScalarType kv_type = model.make_cache(one_block).keys(0).scalar_type();
  const models::KvDtype kv_dtype = kv_type == torch::kBFloat16 ? models::KvDtype::kBFloat16 : models::KvDtype::kFloat32;
  const int64_t most_rows = *std::max_element(row_counts.begin(), row_counts.end());

  std::vector<AttentionBenchRow> out;
  for (int64_t context : contexts) {
    const int64_t blocks = (context + most_rows + block_size - 1) / block_size;
    std::vector<at::Tensor> keys, values;  // per layer: [blocks * block_size, kv_heads, dim]
    for (int64_t l = 0; l < layers; ++l) {
      keys.push_back(torch::randn({blocks * block_size, kv_heads, dim}).to(kv_type));
      values.push_back(torch::randn({blocks * block_size, kv_heads, dim}).to(kv_type));
    }
    const at::Tensor order = torch::randperm(blocks, torch::kInt);
    const int32_t* table = order.data_ptr<int32_t>();
    // Each row count's attention in turns, as they are compared with each other.
    std::vector<models::AttentionRows> rows(row_counts.size());
    std::vector<at::Tensor> queries, attended;
    std::vector<std::function<void()>> forwards;
    for (size_t j = 0; j < row_counts.size(); ++j) {
      const int64_t k = row_counts[j];
      rows[j].block_size = block_size;
      for (int64_t i = 0; i < k; ++i) rows[j].add(table, context + i + 1, nullptr, 0);
      queries.push_back(torch::randn({k, heads * dim}));
      attended.push_back(torch::empty({k, heads * dim}));
      forwards.push_back([&, j] {
        for (int64_t l = 0; l < layers; ++l) {
          models::PagedAttentionArgs args;
          args.q = queries[j].data_ptr<float>();
          args.q_stride = heads * dim;
          args.keys = keys[l].data_ptr();
          args.values = values[l].data_ptr();
          args.kv_dtype = kv_dtype;
          args.heads = heads;
          args.kv_heads = kv_heads;
          args.dim = dim;
          args.rows = &rows[j];
          args.out = attended[j].data_ptr<float>();
          models::paged_attention(model.weights().cpu_kernel, args);
        }
      });
    }
    const std::vector<double> seconds = median_seconds_in_turns(repeats, forwards);
    for (size_t j = 0; j < row_counts.size(); ++j) {
      const int64_t k = row_counts[j];
      AttentionBenchRow row;
      row.context = context;
      row.rows = k;
      row.seconds = seconds[j];
      const double entries = static_cast<double>(rows[j].total_length());
      row.bytes_per_s = 2.0 * layers * (context + k) * kv_heads * dim * keys[0].element_size() / row.seconds;
      row.flops_per_s = 4.0 * layers * heads * dim * entries / row.seconds;
      out.push_back(row);
    }
  }
  return out;
}

}  // namespace seed::bench
