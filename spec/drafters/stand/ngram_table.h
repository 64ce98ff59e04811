// NgramTable: STAND's logit-based n-gram module (Song et al. 2025, STAND,
// sec. 4.1). For every context of 1..4 tokens seen so far
// it keeps the target's next-token distribution, compressed to its 10 most
// likely tokens and averaged over the context's occurrences:
//
//   D_merged(v) = k / (k + 1) * D_old(v) + 1 / (k + 1) * D_new(v)
//
// (an id missing from a distribution counts as 0), then the 10 largest are
// kept and k grows by one. Entries are not renormalised after truncation;
// drafters normalise over the candidates they draw from.
//
// Thread-safe: the drafters of one engine (threads) share a table per group
// and may add and look up at the same time.
#pragma once

#include <array>
#include <cstdint>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "spec/api/verifier.h"

namespace seed::spec {

class NgramTable {
 public:
  static constexpr int kMaxContext = 4;  // contexts of 1..4 tokens
  static constexpr int kTopK = 10;       // entries kept per context

  struct Entry {
    TopTokens next;       // at most kTopK, most likely first
    uint32_t count = 0;   // occurrences merged
  };

  // Merges `next` (the target's top entries of p after tokens[0, end)) into
  // the entries of the context's suffixes of 1..4 tokens.
  // REQUIRES end <= tokens.size(); end == 0 adds nothing.
  void add(const std::vector<int32_t>& tokens, size_t end, const TopTokens& next);

  // The entry of the longest suffix (4, 3, 2, then 1 tokens) of `context`
  // that was seen; false if none was.
  bool lookup(const std::vector<int32_t>& context, Entry* out) const;

  // The merge rule above, without the lock (for tests).
  static void merge(Entry& entry, const TopTokens& next);

 private:
  struct Key {
    std::array<int32_t, kMaxContext> tokens{};
    int32_t length = 0;
    bool operator==(const Key& o) const { return length == o.length && tokens == o.tokens; }
  };
  struct KeyHash {
    size_t operator()(const Key& k) const;
  };
  static Key suffix(const int32_t* end, int length);

  mutable std::mutex mutex_;  // guards entries_
  std::unordered_map<Key, Entry, KeyHash> entries_;
};

}  // namespace seed::spec
