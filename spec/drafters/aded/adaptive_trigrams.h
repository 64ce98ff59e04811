// AdaptiveTrigrams: ADED's tri-gram table as it drifts toward what the
// target writes (Liu et al. 2024, ADED, sec. 2.3 and Algorithm 2
// "Adjust3Gram"). For each consecutive triple (a, b, c) of the
// last `window` tokens of a sequence:
//
//   M[(a, b)][c] = min(M[(a, b)][c] + increment, cap)  if present, else increment
//
// with the ADED code's window 16, increment 0.04 and cap 3.0. Nothing is
// renormalised, decayed or re-pruned, and a triple still inside the window
// is raised again on every step, as in the ADED code.
//
// The corpus table (TrigramTable, possibly empty) is shared read-only by
// every group; the raised values live in this object's overlay, so each
// request group (GenRequest::group) adapts its own view. Thread-safe: the
// drafters of a group adjust and read it from several threads.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "spec/drafters/aded/trigram_table.h"

namespace seed::spec {

struct TrigramAdaptation {
  int window = 16;          // tokens at the end of the sequence (maxLength)
  float increment = 0.04f;  // added per occurrence in the window
  float cap = 3.0f;         // largest value (maxProb)
};

class AdaptiveTrigrams {
 public:
  // REQUIRES base != nullptr. Throws kInvalidArgument for a window < 3, an
  // increment <= 0 or a cap < increment.
  AdaptiveTrigrams(std::shared_ptr<const TrigramTable> base, TrigramAdaptation adaptation = {});

  // Algorithm 2 on tokens[max(0, end - window), end). REQUIRES end <= tokens.size().
  void adjust(const std::vector<int32_t>& tokens, size_t end);

  // The successors of (a, b), corpus values with this group's raised ones
  // in their place, largest first (ties: lower token); empty if none.
  std::vector<TrigramSuccessor> successors(int32_t a, int32_t b) const;

 private:
  std::shared_ptr<const TrigramTable> base_;
  TrigramAdaptation adaptation_;
  mutable std::mutex mutex_;  // guards raised_
  // Per context, the values this group raised (or created), by token.
  std::unordered_map<uint64_t, std::unordered_map<int32_t, float>> raised_;
};

}  // namespace seed::spec
