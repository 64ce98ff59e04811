// PrefixTable: which KV-cache blocks hold which token prefixes.
//
// A full block is named by its chain hash: the hash of its tokens and of the
// chain hash of the block before it, so one name stands for the whole prefix
// up to the block's end (vLLM's automatic prefix caching). Lookups compare
// the block's tokens and its parent's name too, so a 64-bit collision can
// cost a miss, never a wrong hit. Pure bookkeeping: no tensors.
// Not thread-safe: the KvCache that owns it drives it.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

namespace seed::models {

class PrefixTable {
 public:
  static constexpr uint64_t kRoot = 0x9e3779b97f4a7c15ull;  // the name of the empty prefix

  // The name of `count` tokens at `tokens` following the prefix `parent`.
  static uint64_t chain(uint64_t parent, const int32_t* tokens, int64_t count);

  // The block holding `tokens` after `parent`, or -1.
  int32_t find(uint64_t parent, const int32_t* tokens, int64_t count) const;
  // Records that `block` holds `tokens` after `parent`; false (and nothing
  // recorded) when another block already holds them.
  bool insert(int32_t block, uint64_t parent, const int32_t* tokens, int64_t count);
  // Forgets `block` if it is recorded (its contents are about to change).
  void erase(int32_t block);
  bool contains(int32_t block) const { return names_.count(block) > 0; }
  int64_t size() const { return static_cast<int64_t>(names_.size()); }

 private:
  struct Entry {
    int32_t block;
    uint64_t parent;
    std::vector<int32_t> tokens;
  };
  std::unordered_map<uint64_t, Entry> entries_;    // name -> block
  std::unordered_map<int32_t, uint64_t> names_;    // block -> name
};

}  // namespace seed::models
