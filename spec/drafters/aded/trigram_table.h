// TrigramTable: ADED's "LLM representative" (Liu et al. 2024, ADED,
// sec. 2.2, Eq. 1), a sparse tri-gram table
//
//   M[(a, b)][c] = C(a, b, c) / sum over c' of C(a, b, c')
//
// counted over the documents of a corpus tokenized with the target's
// tokenizer (tri-grams never cross documents), each context keeping its 12
// most likely successors, not renormalised. Only seen contexts are stored.
//
// Files (`seed trigrams` writes them): the magic "SEEDTRI\0", a uint32
// version (1), a uint64 context count, then per context int32 a, int32 b,
// uint32 n and n pairs (int32 token, float weight); little-endian.
// Immutable once built; thread-safe to read.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace seed::spec {

struct TrigramSuccessor {
  int32_t token = 0;
  float weight = 0;  // M[(a, b)][token]; ADED's adaptation can raise it above 1
};

class TrigramTable {
 public:
  static constexpr int kTopK = 12;  // successors kept per context (the paper's t)

  // Counts the tri-grams of every document (documents of < 3 tokens add
  // nothing), normalises each context's row and keeps its `top_k` largest
  // entries. Throws kInvalidArgument if top_k < 1.
  static TrigramTable build(const std::vector<std::vector<int32_t>>& documents, int top_k = kTopK);

  // Reads a file written by save(). Throws seed::Error naming the file:
  // kNotFound, kIo, kCorruption (wrong magic or version, truncated, a row
  // not sorted or with a negative token or a weight not in (0, 1]).
  static TrigramTable load(const std::string& path);
  // Throws kIo naming the file if it cannot be written.
  void save(const std::string& path) const;

  // The successors of context (a, b), largest weight first (ties: lower
  // token); null if the context was never seen.
  const std::vector<TrigramSuccessor>* successors(int32_t a, int32_t b) const;

  size_t contexts() const { return rows_.size(); }

  static uint64_t key(int32_t a, int32_t b) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(a)) << 32) | static_cast<uint32_t>(b);
  }

 private:
  std::unordered_map<uint64_t, std::vector<TrigramSuccessor>> rows_;
};

// Largest weight first, ties to the lower token: the order rows keep.
void sort_successors(std::vector<TrigramSuccessor>& row);

}  // namespace seed::spec
