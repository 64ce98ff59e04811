// Verifier: the acceptance rules of speculative decoding, as pure maths.
//
// Given a draft (a chain or a token tree proposed by any drafter), the
// draft distributions q it was sampled from and the target's distributions p
// at the same contexts (one target forward with a tree mask computes them
// all), decide which root-to-node path is accepted and which one token the
// target adds after it. Every rule is lossless: the accepted tokens followed
// by the bonus token are distributed exactly as tokens sampled one by one
// from p (greedy: exactly the argmax chain).
//
//   greedy       accept a child iff it is argmax p; bonus = argmax p.
//   matching     sampled requests with a deterministic draft: at each
//                context the target draws its own token from p by the
//                exponential race autoregressive sampling runs at that
//                position (target_stream, race_from); a child is accepted
//                iff it is that token, else that token ends the verdict. So
//                the tokens are, one for one, those sampling from p alone
//                gives: they depend neither on the drafter nor on the
//                draft's length or shape. A draft that runs the same race
//                over its own q proposes the target's token whenever q is
//                close to p, with probability about Leviathan's sum of
//                min(p, q) (drafter-invariant speculative decoding).
//   sampling     Leviathan et al. 2023 / Chen et al. 2023: accept child x
//                with probability min(1, p(x) / q(x)); on rejection the next
//                token comes from norm(max(0, p - q)).
//   tree         SpecInfer (Miao et al. 2024) multi-candidate rule: the
//                children of a node were drawn i.i.d. from q; try them in
//                order, each with min(1, p(x) / q(x)) against the current
//                residual p, which after a rejection becomes
//                norm(max(0, p - q)); if all are rejected, draw from the
//                residual. A chain is a tree with one child per node.
//   tree without replacement  the same walk for children drawn *without*
//                replacement from q (DraftTree::without_replacement, e.g.
//                STAND's Gumbel-top-k): after a rejection the next sibling
//                is tested against q with the rejected tokens removed and
//                renormalised (recursive rejection sampling, Jeon et al.
//                2024), both in the ratio and in the next residual.
// Drafts from q (DraftSettings::sample_drafts) take the last two rules;
// deterministic ones (a draft's race winners and top tokens, n-gram and
// prompt lookup) the matching rule.
//
// Randomness: every uniform comes from counter_rng keyed by the request's
// seed and id and the *absolute position* of the token being decided
// (purpose kAccept with index = the child's rank among its siblings, or
// kResample), never by rank or schedule. So a serial engine and a scheduled
// one make the same decisions (models/base/counter_rng.h).
//
// Torch-free: plain float spans. Thread-safe: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "models/base/counter_rng.h"
#include "models/base/sampling.h"
#include "spec/api/target_rows.h"

namespace seed::spec {

// A draft distribution at one context, by its support: q(ids[j]) =
// probs[j], zero at every other token. ids are distinct, probs > 0 and sum
// to 1. A draft model's row is its truncated q' (DraftTruncation), STAND's
// its table entry: never a vocabulary row.
struct DraftRow {
  std::vector<int32_t> ids;
  std::vector<float> probs;
  // q(token): probs[j] where ids[j] == token, else 0 (a scan: rows are short).
  float prob(int32_t token) const;
  bool operator==(const DraftRow& other) const { return ids == other.ids && probs == other.probs; }
};

// What a drafter proposes for one sequence. Contexts are numbered: context 0
// is the accepted prefix; context i + 1 is the prefix followed by the path
// to node i. Node i's token was drawn from q of context parents[i] + 1.
struct DraftTree {
  std::vector<int32_t> tokens;   // [n] proposed tokens
  std::vector<int32_t> parents;  // [n] -1 (child of the prefix) or an earlier node
  // q: [n + 1] rows, the distribution each context's children were drawn
  // from. The verifier's rule is exact for the target whatever q is, as
  // long as it is the q the draws came from. Rows of contexts with no
  // children are empty. Empty when `deterministic` (and for an empty draft).
  std::vector<DraftRow> q;
  bool deterministic = false;  // q is one-hot at each proposed token
  // The children of a context were drawn without replacement from its q
  // row (so siblings are distinct); ignored when `deterministic`.
  bool without_replacement = false;
  // Empty, or per node the draft's probability of it at its context (under
  // the request's sampling; at temperature 1 for greedy drafts): what the
  // draft's calibration is measured on. Draft models fill it for fixed shapes.
  std::vector<float> confidence = {};
};

// The decision for one sequence.
struct Verdict {
  std::vector<int32_t> accepted;  // node indices of the accepted path, root first
  int32_t bonus = -1;             // token the target adds after the path
  // Accepted tokens (the path's tokens, then bonus), for convenience.
  std::vector<int32_t> tokens;
  // Filled by targets asked for it (ModelTarget's distribution_top_k),
  // else empty: per token of `tokens`, the top entries of the p it was
  // decided at (context 0, then each accepted node's context).
  std::vector<TopTokens> target_top;
  // Filled by targets that keep hidden states (for EDD drafters), else
  // empty: the target's hidden states (row-major float32, hidden_size
  // wide) at the positions its cache took in since the slot's previous
  // verdict, [hidden_from, hidden_from + rows): the tokens it fed (the
  // whole prompt the first time, later the previous bonus), then the
  // accepted path. The new bonus token has none yet.
  std::vector<float> hidden = {};
  int64_t hidden_from = 0;
};

struct VerifyRequest {
  const DraftTree* draft = nullptr;  // borrowed for the call
  // p at the n + 1 contexts, read where the rule needs it; its sampling's
  // greedy() selects the greedy rule. Borrowed for the call.
  TargetRows* target = nullptr;
  uint64_t seed = 0;        // the request's seed
  uint64_t request = 0;     // the request's id
  uint32_t base_position = 0;  // absolute position of the prefix's next token
};

// Acceptance up to the verdict's last token: the accepted path, and where
// the token after it comes from.
struct Walk {
  std::vector<int32_t> accepted;   // node indices of the accepted path, root first
  int32_t bonus = -1;              // greedy and matching: the target's token after the path
  std::optional<FinalDraw> draw;   // sampling: the draw that gives it
};

// The stream of the race that draws the target's token at absolute
// `position` of the request with `seed` and id `request`: the one
// autoregressive sampling runs there (an empty draft's last token), which
// is what makes matching give its tokens, and the one drafters race q on.
uint64_t target_stream(uint64_t seed, uint64_t request, uint32_t position);

// Whether `request` takes the matching rule: a sampled request whose draft
// is deterministic or empty.
bool matches_target_draws(const VerifyRequest& request);

// The matching rule's draws, one per context of the draft in order: p with
// the race stream of the context's position. Throws as walk() does for a
// malformed request.
std::vector<FinalDraw> target_draws(const VerifyRequest& request);

// Makes the target_draws of every request the matching rule verifies, in
// one batch per LogitRows (draw_final_tokens), and records them
// (TargetRows::set_sample): what a target whose rows lie on a device does
// before walking, so that the walks read tokens, and only tokens cross to
// the host. Throws as target_draws does.
void draw_target_tokens(const std::vector<VerifyRequest>& requests);

// Applies the rule `request.sampling` and the draft imply (greedy,
// matching, or tree/sampling),
// walking from context 0 and trying each context's children in index order
// (rank 0, 1, ... = the order the drafter drew them), and stops before the
// last token's draw. The target's rows are read lazily: p at each drafted
// token of the contexts the walk reaches and, after a rejection, at the
// support of q (the residual is kept sparse: Residual); no whole row.
// REQUIRES: q rows (non-deterministic drafts) sum to 1; the
// children of a context were drawn i.i.d. from its q row, or without
// replacement when draft.without_replacement, or proposed
// deterministically. Float rounding can leave a
// residual with no mass where exact arithmetic never reaches one; the token
// is then drawn from p (verifier.cpp says why that is harmless).
// The verdict has at least one token (the last). Throws kInvalidArgument, naming
// the field, if the request is malformed: draft or target null, target
// rows not n + 1, tokens and parents of different sizes, a parent not
// earlier (parents[i] < i), a token outside [0, vocab), q not n + 1 rows
// (or not empty when deterministic), a q row whose ids and probs differ in
// size or name a token outside [0, vocab), q(x) = 0 for a proposed x, or a
// token repeated among siblings drawn without replacement.
Walk walk(const VerifyRequest& request);

// The verdict of `walk` on `draft`, with `last` the token after its path
// (walk.bonus, or what walk.draw gives).
Verdict verdict_of(const DraftTree& draft, Walk walk, int32_t last);

// walk(), the last token drawn by the target (TargetRows::draw), and
// verdict_of(). An engine verifying many drafts walks each and draws their
// last tokens together (draw_final_tokens).
Verdict verify(const VerifyRequest& request);

}  // namespace seed::spec
