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
//               then keeps one root-to-leaf path, moving it into place;
//   - prefixes: every full block whose tokens are known to form a chain from
//               position 0 is named by its content (PrefixTable), so a new
//               sequence starts from the longest prefix any sequence computed
//               (create_with_prefix) and computes only the rest. Blocks no
//               sequence holds stay named in an LRU list and are evicted,
//               least recently released first, only when the pool is at its
//               budget (max_blocks); so a budget bounds memory, never results.
// Slot 0's block is reserved as a scratch "trash" block: padding tokens of a
// batched forward write there and masked positions read from there.
//
// Tensor layout: [layers, 2 (k, v), slots, kv_heads, head_dim], in the
// dtype and on the device the model chose (CausalLM::make_cache). Keys are stored after RoPE. On CPU
// the pool reserves room for its budget (or the model's context) up front
// but takes memory only for the blocks written (lazy_zeros.h), so it grows
// on demand without copying; elsewhere it doubles by copying.
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
  int64_t initial_blocks = 64;  // blocks handed out first; doubled when they run out
  int64_t max_blocks = 0;       // 0 = unbounded; else extend() throws kOutOfRange
  int64_t max_bytes = 0;        // 0 = unbounded; else the pool's bytes (bounds max_blocks)
  bool prefix_cache = true;     // share and keep full blocks by content
  // >= 0: the cache also keeps each token's hidden state after this layer
  // (the residual stream, float32 on CPU), written by CausalLM::forward and
  // moved, shared and copied with its K/V; EDD drafts read them.
  int64_t hidden_layer = -1;
};

// Counters since construction, for run summaries and benchmarks.
struct KvCacheStats {
  int64_t evicted_blocks = 0;  // named blocks reused for other contents
  int64_t peak_bytes = 0;      // most bytes the pool ever held (live, named and free blocks)
};

// A new sequence and how many of its tokens the cache already holds.
struct CachedStart {
  SequenceId sequence = 0;
  int64_t cached = 0;
};

class KvCache {
 public:
  // `config` must outlive nothing (it is copied). dtype/device of the pool:
  // `options` (the hidden states are float32 on CPU).
  KvCache(const ModelConfig& config, at::TensorOptions options, KvCacheOptions cache_options = {});
  ~KvCache();
  KvCache(KvCache&&) noexcept;
  KvCache& operator=(KvCache&&) noexcept;

  SequenceId create();                    // an empty sequence
  // A sequence holding the longest cached prefix of `tokens` that is a whole
  // number of blocks and leaves at least one token to compute (whose logits
  // the caller needs); the caller feeds tokens[cached:].
  CachedStart create_with_prefix(const std::vector<int32_t>& tokens);
  SequenceId fork(SequenceId parent);     // shares parent's tokens, no copy
  void release(SequenceId sequence);      // frees blocks no one else holds
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
  int64_t block_size() const;
  // Tokens the pool holds at most (max_blocks x block_size); 0: unbounded.
  int64_t max_tokens() const;
  KvCacheStats stats() const;

  // --- for CausalLM::forward ---
  // Reserves positions for `tokens` after the current end, copying a shared
  // tail block first; returns their slots. `chain`: the tokens follow each
  // other (not the nodes of a tree), so once written they may be shared.
  // Throws kOutOfRange past max_blocks when no cached block can be evicted.
  std::vector<int64_t> extend(SequenceId sequence, const std::vector<int32_t>& tokens, bool chain = true);
  // After the forward wrote what extend() reserved: names the sequence's
  // new full chain blocks so that other sequences can start from them.
  void publish(SequenceId sequence);
  // Slot of every position [0, length) of `sequence`, in order.
  void append_slots(SequenceId sequence, std::vector<int64_t>& out) const;
  // The blocks of `sequence`: position p is at slot
  // table[p / block_size()] * block_size() + p % block_size().
  const std::vector<int32_t>& block_table(SequenceId sequence) const;
  static constexpr int64_t kTrashSlot = 0;
  at::Tensor keys(int64_t layer) const;    // [slots, kv_heads, head_dim]
  at::Tensor values(int64_t layer) const;  // [slots, kv_heads, head_dim]
  int64_t hidden_layer() const;            // KvCacheOptions::hidden_layer
  at::Tensor hidden_states() const;        // [slots, hidden_size]; REQUIRES hidden_layer() >= 0

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace seed::models
