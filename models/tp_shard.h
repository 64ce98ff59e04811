// TpShard: the part of a Llama-family model that one rank of a
// tensor-parallel group holds (Megatron-LM, Shoeybi et al. 2019).
//
// With T ranks, rank r keeps
//   attention   query heads [r H/T, (r+1) H/T) and the kv heads they read:
//               q/k/v are column-parallel by heads, so a GQA group never
//               straddles ranks (kv heads are split when T divides them and
//               replicated when they divide T); o is row-parallel over the
//               same heads and the ranks' partial outputs are summed.
//   MLP         gate/up column-parallel over the intermediate dim, down
//               row-parallel over it, partial outputs summed.
//   vocabulary  embedding and LM head rows [r c, (r+1) c), c = ceil(V/T)
//               (the last rank may hold fewer). The embedding looks up the
//               rank's own tokens and the ranks sum; the LM head computes the
//               rank's logit columns and the ranks gather them. Splitting
//               the LM head, rather than replicating it, divides the largest
//               matrix (and a tied model's embedding) by T in memory and in
//               the bandwidth every decoding step reads, for one gather of
//               [tokens, V] floats.
//   norms       replicated.
// Each rank loads only its rows/columns (model_weights.h). Plain values;
// thread-safe.
#pragma once

#include <cstdint>

#include "models/model_config.h"

namespace seed::models {

struct TpShard {
  int rank = 0;
  int size = 1;
  int64_t head_begin = 0, heads = 0;                // query heads
  int64_t kv_head_begin = 0, kv_heads = 0;          // key/value heads
  int64_t intermediate_begin = 0, intermediate = 0;  // MLP columns
  int64_t vocab_begin = 0, vocab = 0;               // embedding / LM head rows
  int64_t vocab_stride = 0;                         // ceil(V / T): rows every rank's logits are padded to

  // The whole model (size 1).
  static TpShard whole(const ModelConfig& config);
  // Rank `rank` of `size`. Throws kInvalidArgument naming the field and the
  // tp size when num_attention_heads or intermediate_size is not divisible by
  // it, num_key_value_heads neither divides nor is divisible by it, or
  // vocab_size is too small to give every rank a row.
  static TpShard of(const ModelConfig& config, int rank, int size);

  bool is_whole() const { return size == 1; }
  // `full` with this shard's head counts and intermediate size: the shape of
  // the rank's KV cache and projections. `full` itself when whole.
  ModelConfig local_config(const ModelConfig& full) const;
};

}  // namespace seed::models
