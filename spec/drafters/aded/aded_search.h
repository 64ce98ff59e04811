// ADED's draft search (Liu et al. 2024, ADED, sec. 2.3 and Algorithm 1):
// a small Monte Carlo tree search over the
// tri-gram table from the context's last two tokens, whose most visited
// paths become the draft sequences.
//
// Each iteration selects children by PUCT from the root,
//
//   PUCT(s, a) = Q(s, a) + E * P(s, a) * sqrt(N(s)) / (1 + N(s, a)),
//   E = C1 + ln((N(s) + C2 + 1) / C2),   Q = score / visits,
//
// (N(s): the parent's visits; P: the tri-gram value, the prior; an
// unvisited child first), expands a leaf once with all its successors,
// rolls out to `depth` contexts by sampling successors in proportion to
// their values, and adds the rollout's reward 1 + sum of M[context][next]
// along it to every node on the path. Choices where the paper and its
// code leave room (notes 4): the reward is the tri-gram value of the next
// token (the paper's intent; the code reads the wrong token); children are
// created largest prior first and selection takes the first maximum, so a
// search is a pure function of the table and the uniforms; the expanded
// leaf continues with its first child.
//
// The drafts: every non-root node's path (at most depth - 1 tokens), most
// visited first, the best `candidates` of them, each extended by the most
// likely successor of its last two tokens. Pure; thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "spec/drafters/aded/trigram_table.h"

namespace seed::spec {

struct AdedSearchOptions {
  int iterations = 150;  // s
  int depth = 4;         // l: contexts on a rollout; drafts have at most this many tokens
  int candidates = 24;   // n: draft sequences kept
  double c1 = 32.0;
  double c2 = 8.0;
};

struct AdedDraft {
  std::vector<int32_t> tokens;  // continues the context; 1..depth tokens
  int visits = 0;               // of its search node
};

// The successors of context (a, b), largest value first; empty if unseen.
using TrigramRows = std::function<std::vector<TrigramSuccessor>(int32_t a, int32_t b)>;
// The i-th uniform in [0, 1) of this search (counter-based in the drafter).
using SearchUniform = std::function<double(uint32_t i)>;

// PUCT's exploration weight E for a parent visited `parent_visits` times.
double aded_exploration(double parent_visits, double c1, double c2);

// The drafts continuing context (a, b), most visited first (ties: the
// search tree's depth-first order). Empty if (a, b) has no successors.
// Throws kInvalidArgument if iterations < 1, depth < 2, candidates < 1 or
// c2 <= 0.
std::vector<AdedDraft> aded_search(const TrigramRows& rows, int32_t a, int32_t b, const AdedSearchOptions& options,
                                   const SearchUniform& uniform);

}  // namespace seed::spec
