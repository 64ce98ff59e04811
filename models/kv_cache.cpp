#include "models/kv_cache.h"

#include <torch/torch.h>

#include <list>
#include <unordered_map>

#include "models/base/error.h"
#include "models/lazy_zeros.h"
#include "models/prefix_table.h"

namespace seed::models {

namespace {
constexpr int32_t kTrashBlock = 0;

struct Sequence {
  std::vector<int32_t> blocks;  // block table: position p lives in blocks[p / block_size]
  int64_t length = 0;
  std::vector<int32_t> tokens;  // the token at each position (tree nodes until commit_path)
  int64_t chain = 0;            // positions [0, chain) hold a chain of `tokens`
  std::vector<uint64_t> names;  // chain hash of each published full block
};
}  // namespace

struct KvCache::Impl {
  ModelConfig config;
  at::TensorOptions options;
  KvCacheOptions cache_options;
  at::Tensor pool;                 // [layers, 2, blocks * block_size, kv_heads, head_dim]
  at::Tensor hidden;               // [blocks * block_size, hidden_size] when hidden_layer >= 0
  std::vector<int32_t> refcount;   // per block; the trash block is pinned at 1
  std::vector<int32_t> free_blocks;
  // Named blocks no sequence holds, least recently released first, and each
  // one's place in that list.
  std::list<int32_t> unused_named;
  std::unordered_map<int32_t, std::list<int32_t>::iterator> unused_at;
  PrefixTable prefixes;
  std::unordered_map<SequenceId, Sequence> sequences;
  SequenceId next_id = 0;
  KvCacheStats stats;
  int64_t bytes_per_token = 0;  // KvCache::bytes_per_token()

  int64_t block_size() const { return cache_options.block_size; }
  int64_t num_blocks() const { return static_cast<int64_t>(refcount.size()); }
  bool can_grow() const { return cache_options.max_blocks <= 0 || num_blocks() < cache_options.max_blocks + 1; }

  Sequence& get(SequenceId id) {
    auto it = sequences.find(id);
    SEED_CHECK(it != sequences.end(), kInvalidArgument) << "KV cache has no sequence " << id;
    return it->second;
  }
  const Sequence& get(SequenceId id) const { return const_cast<Impl*>(this)->get(id); }

  // Blocks the pool tensor has room for; the allocator hands out
  // num_blocks() of them.
  int64_t capacity() const { return pool.defined() ? pool.size(2) / block_size() : 0; }

  // Blocks a new CPU pool reserves: the budget's, or else one sequence of
  // the model's whole context. Only written blocks take memory
  // (lazy_zeros), so the reservation costs address space, not memory.
  // The hidden states: float32 on CPU (the CPU layers' residual stream,
  // whatever the keys and values are held in), else the pool's dtype.
  at::TensorOptions hidden_options() const {
    return options.device().is_cpu() ? options.dtype(at::kFloat) : options;
  }

  int64_t cpu_reservation() const {
    if (cache_options.max_blocks > 0) return cache_options.max_blocks + 1;
    return (config.max_position_embeddings + block_size() - 1) / block_size() + 1;
  }

  // Hands the allocator more blocks (doubling, within the budget), moving
  // the pool to a larger tensor only when it is out of room: on CPU rarely
  // (past the reservation), and then copying only the blocks handed out.
  // The pool stays a normal tensor even when forward() grows it under
  // InferenceMode: an inference tensor could not be written outside that
  // mode (commit_path, fork's copy-on-write), and callers run both.
  void grow() {
    c10::InferenceMode normal_tensors(false);
    const int64_t old_blocks = num_blocks();
    int64_t new_blocks = std::max<int64_t>(old_blocks * 2, cache_options.initial_blocks + 1);
    if (cache_options.max_blocks > 0) new_blocks = std::min(new_blocks, cache_options.max_blocks + 1);
    if (new_blocks > capacity()) {
      const bool cpu = options.device().is_cpu();
      const int64_t room = cpu ? std::max(new_blocks, cpu_reservation()) : new_blocks;
      const auto zeros = [&](at::IntArrayRef shape, at::TensorOptions of) {
        return cpu ? lazy_zeros(shape, of) : torch::zeros(shape, of);
      };
      const int64_t used = old_blocks * block_size();
      at::Tensor grown =
          zeros({config.num_hidden_layers, 2, room * block_size(), config.num_key_value_heads, config.head_dim}, options);
      if (used > 0) grown.narrow(2, 0, used).copy_(pool.narrow(2, 0, used));
      pool = grown;
      if (cache_options.hidden_layer >= 0) {
        at::Tensor grown_hidden = zeros({room * block_size(), config.hidden_size}, hidden_options());
        if (used > 0) grown_hidden.narrow(0, 0, used).copy_(hidden.narrow(0, 0, used));
        hidden = grown_hidden;
      }
    }
    refcount.resize(new_blocks, 0);
    for (int64_t b = new_blocks - 1; b >= std::max<int64_t>(old_blocks, 1); --b) {
      free_blocks.push_back(static_cast<int32_t>(b));
    }
    refcount[kTrashBlock] = 1;
    stats.peak_bytes = std::max(stats.peak_bytes, new_blocks * block_size() * bytes_per_token);
  }

  // A free block; else a new one while the budget allows; else the least
  // recently released named block, forgotten.
  int32_t allocate_block() {
    if (free_blocks.empty() && can_grow()) grow();
    int32_t block;
    if (!free_blocks.empty()) {
      block = free_blocks.back();
      free_blocks.pop_back();
    } else {
      SEED_CHECK(!unused_named.empty(), kOutOfRange)
          << "KV cache is full (" << cache_options.max_blocks << " blocks of " << block_size()
          << " tokens, all held by live sequences); raise the KV cache budget (max_blocks or max_bytes)";
      block = unused_named.front();
      unused_named.pop_front();
      unused_at.erase(block);
      prefixes.erase(block);
      ++stats.evicted_blocks;
    }
    refcount[block] = 1;
    return block;
  }

  void ref(int32_t block) {
    if (refcount[block]++ > 0) return;
    const auto it = unused_at.find(block);  // a named block comes back into use
    if (it != unused_at.end()) {
      unused_named.erase(it->second);
      unused_at.erase(it);
    }
  }

  void unref(int32_t block) {
    if (--refcount[block] > 0) return;
    if (prefixes.contains(block)) {
      unused_at.emplace(block, unused_named.insert(unused_named.end(), block));
    } else {
      free_blocks.push_back(block);
    }
  }

  // Drops the blocks of `seq` from table index `from` on, last first, so
  // that a prefix's tail is evicted before its head.
  void drop_blocks(Sequence& seq, size_t from) {
    for (size_t b = seq.blocks.size(); b-- > from;) unref(seq.blocks[b]);
    seq.blocks.resize(from);
  }

  // Copies every layer's k and v of `src` slots into `dst` slots.
  void copy_slots(const std::vector<int64_t>& src, const std::vector<int64_t>& dst) {
    const auto index_options = torch::TensorOptions().dtype(torch::kLong);
    at::Tensor src_index = torch::tensor(src, index_options).to(options.device());
    at::Tensor dst_index = torch::tensor(dst, index_options).to(options.device());
    pool.index_copy_(2, dst_index, pool.index_select(2, src_index));
    if (hidden.defined()) hidden.index_copy_(0, dst_index, hidden.index_select(0, src_index));
  }

  // Makes block number `table_index` of `seq` safe to write: its own copy
  // if shared; unnamed if named (its contents are about to change).
  void make_writable(Sequence& seq, size_t table_index) {
    const int32_t shared = seq.blocks[table_index];
    if (refcount[shared] == 1) {
      prefixes.erase(shared);
      return;
    }
    const int32_t own = allocate_block();
    std::vector<int64_t> src(block_size()), dst(block_size());
    for (int64_t i = 0; i < block_size(); ++i) {
      src[i] = shared * block_size() + i;
      dst[i] = own * block_size() + i;
    }
    copy_slots(src, dst);
    unref(shared);
    seq.blocks[table_index] = own;
  }

  int64_t slot(const Sequence& seq, int64_t position) const {
    return seq.blocks[position / block_size()] * block_size() + position % block_size();
  }

  // Forgets what no longer holds after `seq` was cut to `length` tokens.
  void cut(Sequence& seq, int64_t length) {
    seq.length = length;
    seq.tokens.resize(static_cast<size_t>(length));
    seq.chain = std::min(seq.chain, length);
    seq.names.resize(std::min<size_t>(seq.names.size(), static_cast<size_t>(length / block_size())));
  }
};

KvCache::KvCache(const ModelConfig& config, at::TensorOptions options, KvCacheOptions cache_options)
    : impl_(std::make_unique<Impl>()) {
  SEED_CHECK(cache_options.block_size > 0, kInvalidArgument) << "KV cache block_size must be positive";
  impl_->config = config;
  impl_->options = options;
  impl_->cache_options = cache_options;
  if (cache_options.max_bytes > 0) {
    // The pool's blocks: the budget's, less the trash block.
    const int64_t blocks = cache_options.max_bytes / (cache_options.block_size * bytes_per_token()) - 1;
    SEED_CHECK(blocks >= 1, kInvalidArgument)
        << "KV cache budget of " << cache_options.max_bytes << " bytes holds no block of "
        << cache_options.block_size << " tokens (" << cache_options.block_size * bytes_per_token() << " bytes)";
    int64_t& max_blocks = impl_->cache_options.max_blocks;
    max_blocks = max_blocks > 0 ? std::min(max_blocks, blocks) : blocks;
  }
  impl_->bytes_per_token = bytes_per_token();
  impl_->grow();
}

KvCache::~KvCache() = default;
KvCache::KvCache(KvCache&&) noexcept = default;
KvCache& KvCache::operator=(KvCache&&) noexcept = default;

SequenceId KvCache::create() {
  const SequenceId id = impl_->next_id++;
  impl_->sequences.emplace(id, Sequence{});
  return id;
}

SequenceId KvCache::fork(SequenceId parent) {
  Sequence child = impl_->get(parent);
  for (int32_t block : child.blocks) impl_->ref(block);
  const SequenceId id = impl_->next_id++;
  impl_->sequences.emplace(id, std::move(child));
  return id;
}

void KvCache::release(SequenceId sequence) {
  Sequence& seq = impl_->get(sequence);
  impl_->drop_blocks(seq, 0);
  impl_->sequences.erase(sequence);
}

int64_t KvCache::length(SequenceId sequence) const { return impl_->get(sequence).length; }

void KvCache::truncate(SequenceId sequence, int64_t length) {
  Sequence& seq = impl_->get(sequence);
  SEED_CHECK(length >= 0 && length <= seq.length, kInvalidArgument)
      << "cannot truncate sequence " << sequence << " of length " << seq.length << " to " << length;
  impl_->drop_blocks(seq, static_cast<size_t>((length + impl_->block_size() - 1) / impl_->block_size()));
  impl_->cut(seq, length);
}

void KvCache::commit_path(SequenceId sequence, int64_t base, const std::vector<int32_t>& path) {
  Sequence& seq = impl_->get(sequence);
  std::vector<int64_t> src, dst;
  for (size_t i = 0; i < path.size(); ++i) {
    SEED_CHECK(path[i] >= static_cast<int32_t>(i) && (i == 0 || path[i] > path[i - 1]) &&
                   base + path[i] < seq.length,
               kInvalidArgument)
        << "commit_path: node " << path[i] << " at step " << i << " is not a valid path node";
    // path[i] >= i, so a destination never overwrites a later source.
    if (path[i] != static_cast<int32_t>(i)) {
      src.push_back(impl_->slot(seq, base + path[i]));
      dst.push_back(impl_->slot(seq, base + static_cast<int64_t>(i)));
      seq.tokens[base + i] = seq.tokens[base + path[i]];
    }
  }
  if (!src.empty()) impl_->copy_slots(src, dst);
  const bool chain_to_base = seq.chain >= base;
  truncate(sequence, base + static_cast<int64_t>(path.size()));
  if (chain_to_base) seq.chain = seq.length;  // the kept path is a chain after the prefix
}

int64_t KvCache::bytes_per_token() const {
  const auto& c = impl_->config;
  const int64_t hidden = impl_->cache_options.hidden_layer >= 0 ? c.hidden_size : 0;
  return c.num_hidden_layers * 2 * c.num_key_value_heads * c.head_dim *
             static_cast<int64_t>(impl_->options.dtype().itemsize()) +
         hidden * static_cast<int64_t>(impl_->hidden_options().dtype().itemsize());
}

int64_t KvCache::block_size() const { return impl_->block_size(); }

int64_t KvCache::max_tokens() const {
  return impl_->cache_options.max_blocks > 0 ? impl_->cache_options.max_blocks * impl_->block_size() : 0;
}

KvCacheStats KvCache::stats() const { return impl_->stats; }

int64_t KvCache::bytes_in_use() const {
  int64_t used = 0;
  for (int64_t b = 1; b < impl_->num_blocks(); ++b) used += impl_->refcount[b] > 0;
  return used * impl_->block_size() * bytes_per_token();
}

std::vector<int64_t> KvCache::extend(SequenceId sequence, const std::vector<int32_t>& tokens, bool chain) {
  Sequence& seq = impl_->get(sequence);
  const int64_t bs = impl_->block_size();
  const int64_t count = static_cast<int64_t>(tokens.size());
  const size_t needed = static_cast<size_t>((seq.length + count + bs - 1) / bs);
  if (seq.length % bs != 0 && count > 0) impl_->make_writable(seq, seq.blocks.size() - 1);
  const size_t had = seq.blocks.size();
  try {
    while (seq.blocks.size() < needed) seq.blocks.push_back(impl_->allocate_block());
  } catch (...) {  // cache full: leave the sequence as it was
    impl_->drop_blocks(seq, had);
    throw;
  }
  std::vector<int64_t> slots;
  slots.reserve(count);
  for (int64_t p = seq.length; p < seq.length + count; ++p) slots.push_back(impl_->slot(seq, p));
  if (chain && seq.chain == seq.length) seq.chain += count;
  seq.length += count;
  seq.tokens.insert(seq.tokens.end(), tokens.begin(), tokens.end());
  return slots;
}

void KvCache::publish(SequenceId sequence) {
  Impl& m = *impl_;
  if (!m.cache_options.prefix_cache) return;
  Sequence& seq = m.get(sequence);
  const int64_t bs = m.block_size();
  for (size_t b = seq.names.size(); static_cast<int64_t>(b + 1) * bs <= seq.chain; ++b) {
    const uint64_t parent = b == 0 ? PrefixTable::kRoot : seq.names[b - 1];
    const int32_t* tokens = seq.tokens.data() + b * bs;
    // A block another sequence already named stays this sequence's own.
    m.prefixes.insert(seq.blocks[b], parent, tokens, bs);
    seq.names.push_back(PrefixTable::chain(parent, tokens, bs));
  }
}

CachedStart KvCache::create_with_prefix(const std::vector<int32_t>& tokens) {
  Impl& m = *impl_;
  const SequenceId id = create();
  Sequence& seq = m.sequences.at(id);
  if (!m.cache_options.prefix_cache || tokens.empty()) return {id, 0};
  const int64_t bs = m.block_size();
  const int64_t usable_blocks = (static_cast<int64_t>(tokens.size()) - 1) / bs;
  uint64_t parent = PrefixTable::kRoot;
  for (int64_t b = 0; b < usable_blocks; ++b) {
    const int32_t block = m.prefixes.find(parent, tokens.data() + b * bs, bs);
    if (block < 0) break;
    m.ref(block);
    seq.blocks.push_back(block);
    parent = PrefixTable::chain(parent, tokens.data() + b * bs, bs);
    seq.names.push_back(parent);
  }
  seq.length = seq.chain = static_cast<int64_t>(seq.blocks.size()) * bs;
  seq.tokens.assign(tokens.begin(), tokens.begin() + seq.length);
  return {id, seq.length};
}

void KvCache::append_slots(SequenceId sequence, std::vector<int64_t>& out) const {
  const Sequence& seq = impl_->get(sequence);
  for (int64_t p = 0; p < seq.length; ++p) out.push_back(impl_->slot(seq, p));
}

const std::vector<int32_t>& KvCache::block_table(SequenceId sequence) const { return impl_->get(sequence).blocks; }

at::Tensor KvCache::keys(int64_t layer) const { return impl_->pool[layer][0].narrow(0, 0, impl_->num_blocks() * impl_->block_size()); }
at::Tensor KvCache::values(int64_t layer) const { return impl_->pool[layer][1].narrow(0, 0, impl_->num_blocks() * impl_->block_size()); }
int64_t KvCache::hidden_layer() const { return impl_->cache_options.hidden_layer; }
at::Tensor KvCache::hidden_states() const {
  SEED_CHECK(impl_->hidden.defined(), kInvalidArgument) << "this KV cache keeps no hidden states (hidden_layer)";
  return impl_->hidden.narrow(0, 0, impl_->num_blocks() * impl_->block_size());
}

}  // namespace seed::models
