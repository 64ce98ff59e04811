#include "models/kv_cache.h"

#include <torch/torch.h>

#include <unordered_map>

#include "models/base/error.h"

namespace seed::models {

namespace {
constexpr int32_t kTrashBlock = 0;

struct Sequence {
  std::vector<int32_t> blocks;  // block table: position p lives in blocks[p / block_size]
  int64_t length = 0;
};
}  // namespace

struct KvCache::Impl {
  ModelConfig config;
  at::TensorOptions options;
  KvCacheOptions cache_options;
  at::Tensor pool;                 // [layers, 2, blocks * block_size, kv_heads, head_dim]
  std::vector<int32_t> refcount;   // per block; the trash block is pinned at 1
  std::vector<int32_t> free_blocks;
  std::unordered_map<SequenceId, Sequence> sequences;
  SequenceId next_id = 0;

  int64_t block_size() const { return cache_options.block_size; }
  int64_t num_blocks() const { return static_cast<int64_t>(refcount.size()); }

  Sequence& get(SequenceId id) {
    auto it = sequences.find(id);
    SEED_CHECK(it != sequences.end(), kInvalidArgument) << "KV cache has no sequence " << id;
    return it->second;
  }
  const Sequence& get(SequenceId id) const { return const_cast<Impl*>(this)->get(id); }

  // The pool stays a normal tensor even when forward() grows it under
  // InferenceMode: an inference tensor could not be written outside that
  // mode (commit_path, fork's copy-on-write), and callers run both.
  void grow() {
    c10::InferenceMode normal_tensors(false);
    const int64_t old_blocks = num_blocks();
    int64_t new_blocks = std::max<int64_t>(old_blocks * 2, cache_options.initial_blocks + 1);
    if (cache_options.max_blocks > 0) new_blocks = std::min(new_blocks, cache_options.max_blocks + 1);
    SEED_CHECK(new_blocks > old_blocks, kOutOfRange)
        << "KV cache is full (" << cache_options.max_blocks << " blocks of " << block_size()
        << " tokens); release sequences or raise max_blocks";
    at::Tensor grown = torch::zeros({config.num_hidden_layers, 2, new_blocks * block_size(),
                                     config.num_key_value_heads, config.head_dim},
                                    options);
    if (pool.defined()) grown.narrow(2, 0, pool.size(2)).copy_(pool);
    pool = grown;
    refcount.resize(new_blocks, 0);
    for (int64_t b = new_blocks - 1; b >= std::max<int64_t>(old_blocks, 1); --b) {
      free_blocks.push_back(static_cast<int32_t>(b));
    }
    refcount[kTrashBlock] = 1;
  }

  int32_t allocate_block() {
    if (free_blocks.empty()) grow();
    const int32_t block = free_blocks.back();
    free_blocks.pop_back();
    refcount[block] = 1;
    return block;
  }

  void unref(int32_t block) {
    if (--refcount[block] == 0) free_blocks.push_back(block);
  }

  // Copies every layer's k and v of `src` slots into `dst` slots.
  void copy_slots(const std::vector<int64_t>& src, const std::vector<int64_t>& dst) {
    const auto index_options = torch::TensorOptions().dtype(torch::kLong);
    at::Tensor src_index = torch::tensor(src, index_options).to(options.device());
    at::Tensor dst_index = torch::tensor(dst, index_options).to(options.device());
    pool.index_copy_(2, dst_index, pool.index_select(2, src_index));
  }

  // Gives `seq` its own copy of block number `table_index` if it is shared.
  void make_exclusive(Sequence& seq, size_t table_index) {
    const int32_t shared = seq.blocks[table_index];
    if (refcount[shared] == 1) return;
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
};

KvCache::KvCache(const ModelConfig& config, at::TensorOptions options, KvCacheOptions cache_options)
    : impl_(std::make_unique<Impl>()) {
  SEED_CHECK(cache_options.block_size > 0, kInvalidArgument) << "KV cache block_size must be positive";
  impl_->config = config;
  impl_->options = options;
  impl_->cache_options = cache_options;
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
  for (int32_t block : child.blocks) ++impl_->refcount[block];
  const SequenceId id = impl_->next_id++;
  impl_->sequences.emplace(id, std::move(child));
  return id;
}

void KvCache::release(SequenceId sequence) {
  Sequence& seq = impl_->get(sequence);
  for (int32_t block : seq.blocks) impl_->unref(block);
  impl_->sequences.erase(sequence);
}

bool KvCache::contains(SequenceId sequence) const { return impl_->sequences.count(sequence) > 0; }

int64_t KvCache::length(SequenceId sequence) const { return impl_->get(sequence).length; }

void KvCache::truncate(SequenceId sequence, int64_t length) {
  Sequence& seq = impl_->get(sequence);
  SEED_CHECK(length >= 0 && length <= seq.length, kInvalidArgument)
      << "cannot truncate sequence " << sequence << " of length " << seq.length << " to " << length;
  const size_t keep_blocks = static_cast<size_t>((length + impl_->block_size() - 1) / impl_->block_size());
  for (size_t b = keep_blocks; b < seq.blocks.size(); ++b) impl_->unref(seq.blocks[b]);
  seq.blocks.resize(keep_blocks);
  seq.length = length;
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
    }
  }
  if (!src.empty()) impl_->copy_slots(src, dst);
  truncate(sequence, base + static_cast<int64_t>(path.size()));
}

int64_t KvCache::bytes_per_token() const {
  const auto& c = impl_->config;
  return c.num_hidden_layers * 2 * c.num_key_value_heads * c.head_dim *
         static_cast<int64_t>(impl_->pool.element_size());
}

int64_t KvCache::bytes_in_use() const {
  int64_t used = 0;
  for (int64_t b = 1; b < impl_->num_blocks(); ++b) used += impl_->refcount[b] > 0;
  return used * impl_->block_size() * bytes_per_token();
}

std::vector<int64_t> KvCache::extend(SequenceId sequence, int64_t count) {
  Sequence& seq = impl_->get(sequence);
  const int64_t bs = impl_->block_size();
  const size_t needed = static_cast<size_t>((seq.length + count + bs - 1) / bs);
  if (seq.length % bs != 0 && count > 0) impl_->make_exclusive(seq, seq.blocks.size() - 1);
  const size_t had = seq.blocks.size();
  try {
    while (seq.blocks.size() < needed) seq.blocks.push_back(impl_->allocate_block());
  } catch (...) {  // cache full: leave the sequence as it was
    for (size_t b = had; b < seq.blocks.size(); ++b) impl_->unref(seq.blocks[b]);
    seq.blocks.resize(had);
    throw;
  }
  std::vector<int64_t> slots;
  slots.reserve(count);
  for (int64_t p = seq.length; p < seq.length + count; ++p) slots.push_back(impl_->slot(seq, p));
  seq.length += count;
  return slots;
}

void KvCache::append_slots(SequenceId sequence, std::vector<int64_t>& out) const {
  const Sequence& seq = impl_->get(sequence);
  for (int64_t p = 0; p < seq.length; ++p) out.push_back(impl_->slot(seq, p));
}

at::Tensor KvCache::keys(int64_t layer) const { return impl_->pool[layer][0]; }
at::Tensor KvCache::values(int64_t layer) const { return impl_->pool[layer][1]; }

}  // namespace seed::models
