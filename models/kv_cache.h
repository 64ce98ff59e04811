// KvCache: the keys and values of every sequence a model is decoding.
//
// Paged, as in vLLM: one pool of fixed-size blocks per model, and per
// sequence a block table mapping its positions to pool slots. This gives
//   - append:   extend() reserves slots for new tokens;
//   - truncate: drop the tail (a rejected draft) in O(blocks);
//   - fork:     a child shares its parent's blocks (refcounted) and copies a
//               shared block only when it writes into it (copy-on-write), so
//               a branch of a search tree costs no memory until it diverges;
//   - trees:    a draft tree's nodes are appended like a chain (node i at
//               position length+i, see CausalLM::forward) and commit_path()
//               then keeps one root-to-leaf path, moving it into place.
// Slot 0's block is reserved as a scratch "trash" block: padding tokens of a
// batched forward write there and masked positions read from there.
//
// Tensor layout: [layers, 2 (k, v), slots, kv_heads, head_dim], in the
// model's compute dtype on its device. Keys are stored after RoPE.
// Not thread-safe: one owner (the engine) drives it.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "models/model_config.h"

namespace seed::models {

using SequenceId = int64_t;

struct KvCacheOptions {
  int64_t block_size = 16;      // tokens per block: sharing granularity
  int64_t initial_blocks = 64;  // the pool doubles when it runs out
  int64_t max_blocks = 0;       // 0 = unbounded; else extend() throws kOutOfRange
};

class KvCache {
 public:
  // `config` must outlive nothing (it is copied). dtype/device of the pool:
  // those the model computes in.
  KvCache(const ModelConfig& config, at::TensorOptions options, KvCacheOptions cache_options = {});
  ~KvCache();
  KvCache(KvCache&&) noexcept;
  KvCache& operator=(KvCache&&) noexcept;

  SequenceId create();                    // an empty sequence
  SequenceId fork(SequenceId parent);     // shares parent's tokens, no copy
  void release(SequenceId sequence);      // frees blocks no one else holds
  bool contains(SequenceId sequence) const;
  int64_t length(SequenceId sequence) const;

  // Keeps the first `length` tokens. REQUIRES length <= length(sequence).
  void truncate(SequenceId sequence, int64_t length);

  // After a tree forward appended nodes 0..n-1 at positions base..base+n-1:
  // keeps nodes path[0], path[1], ... at positions base, base+1, ... and
  // drops the rest. REQUIRES path strictly increasing (a root-to-node path in
  // topological order) and base + path.back() < length(sequence).
  void commit_path(SequenceId sequence, int64_t base, const std::vector<int32_t>& path);

  // Bytes of the blocks held by at least one sequence (shared blocks once).
  int64_t bytes_in_use() const;
  int64_t bytes_per_token() const;

  // --- for CausalLM::forward ---
  // Reserves `count` positions after the current end, copying a shared tail
  // block first; returns their slots. Throws kOutOfRange past max_blocks.
  std::vector<int64_t> extend(SequenceId sequence, int64_t count);
  // Slot of every position [0, length) of `sequence`, in order.
  void append_slots(SequenceId sequence, std::vector<int64_t>& out) const;
  static constexpr int64_t kTrashSlot = 0;
  at::Tensor keys(int64_t layer) const;    // [slots, kv_heads, head_dim]
  at::Tensor values(int64_t layer) const;  // [slots, kv_heads, head_dim]

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace seed::models
