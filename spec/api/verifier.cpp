// The acceptance rules of speculative decoding (see verifier.h).
//
// Why the sampling rule is lossless, in three steps.
//
// 1. One candidate (Leviathan et al. 2023, Thm 1; Chen et al. 2023). Target
//    r, proposal q, x ~ q; accept x with probability min(1, r(x) / q(x)),
//    else draw from norm(max(0, r - q)). Then
//      P(out = v) = min(q(v), r(v)) + P(reject) * max(0, r(v) - q(v)) / Z
//    with P(reject) = 1 - sum min(q, r) = sum max(0, r - q) = Z (r and q
//    both sum to 1), so P(out = v) = min(q, r)(v) + max(0, r - q)(v) = r(v).
//
// 2. k i.i.d. candidates at one context (SpecInfer, Miao et al. ASPLOS 2024,
//    multi-step speculative sampling; Yang et al. 2024, multi-candidate SD,
//    the case "sampled with replacement"). Stage j tests x_j against the
//    residual r_{j-1} (r_0 = p); a rejection hands over to stage j + 1 with
//    r_j = norm(max(0, r_{j-1} - q)); after stage k the token is drawn from
//    r_k. By induction from the back, "stages j.. onwards" emit ~ r_{j-1}:
//    stage k + 1 is a plain draw from r_k, and stage j is step 1 with target
//    r_{j-1} whose fallback draw is "stages j + 1.. onwards" ~ r_j, which is
//    independent of (x_j, u_j) because the candidates are i.i.d. and every
//    uniform has its own key. So the proposal stays q for every sibling: the
//    draft of x_{j+1} did not depend on x_j having been rejected. (Drafts
//    sampled *without* replacement would need q renormalised without x_j;
//    that is the next step.)
//
// 2'. k candidates drawn without replacement (Jeon et al. 2024, recursive
//    rejection sampling). Now x_j ~ q_{j-1} = q with x_1..x_{j-1} removed
//    and renormalised, so stage j is step 1 with proposal q_{j-1} and target
//    r_{j-1}, and its residual is r_j = norm(max(0, r_{j-1} - q_{j-1})).
//    The induction of step 2 goes through unchanged: r_j is a function of
//    x_1..x_{j-1} only (not of x_j), so whatever stages j + 1.. do, they
//    emit ~ r_j given the history. A rejected x_j had r_{j-1}(x_j) <
//    q_{j-1}(x_j), so r_j(x_j) = 0: the residual never offers a token the
//    shrinking proposal can no longer draw.
//
// 3. Down the tree. Once x is accepted at context c, the children of x were
//    drawn from q at c + x with draft uniforms that no decision at c used, so
//    step 2 applies again, conditionally on the path: the emitted tokens are
//    p(x_1) p(x_2 | x_1) ... exactly, whichever drafter's tree it is.
//
// A deterministic candidate is step 1 with q = one-hot at x: accept with
// probability r(x); the residual max(0, r - one_hot(x)) is r with x zeroed.
//
// The greedy rule is the limit of the same walk with one-hot p: the child
// equal to argmax p is the one accepted, and the bonus is argmax p.
#include "spec/api/verifier.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "models/base/error.h"

namespace seed::spec {
namespace {

// A residual with less mass than this is float rounding, not a distribution.
// In exact arithmetic the residual never has zero mass when it is reached:
// max(0, r - q) = 0 means r <= q everywhere, i.e. r == q (both sum to 1), and
// then min(1, r(x) / q(x)) = 1 for every x the drafter could have drawn
// (q(x) > 0), so no candidate is ever rejected; for a deterministic x it
// means r is one-hot at x, accepted with probability r(x) = 1. Float rows
// sum to 1 only within ~1e-7, so r ~= q can reject with about that
// probability and leave noise behind; we draw from p instead. The error is
// at most the probability of getting here, below this bound.
constexpr double kMinResidualMass = 1e-6;

// Throws kInvalidArgument naming the first malformed field of the request.
void check_request(const VerifyRequest& request) {
  SEED_CHECK(request.draft != nullptr, kInvalidArgument) << "VerifyRequest.draft is null";
  SEED_CHECK(request.target != nullptr, kInvalidArgument) << "VerifyRequest.target is null";
  const int64_t vocab = request.target->vocab();

  const DraftTree& draft = *request.draft;
  SEED_CHECK(draft.tokens.size() == draft.parents.size(), kInvalidArgument)
      << "draft has " << draft.tokens.size() << " tokens but " << draft.parents.size()
      << " parents; a node needs one of each";
  SEED_CHECK(draft.tokens.size() < static_cast<size_t>(std::numeric_limits<int32_t>::max()), kInvalidArgument)
      << "draft has " << draft.tokens.size() << " nodes; node ids are int32_t";
  const int32_t n = static_cast<int32_t>(draft.tokens.size());
  SEED_CHECK(request.target->contexts() == n + 1, kInvalidArgument)
      << "VerifyRequest.target has " << request.target->contexts() << " rows for a draft of " << n
      << " nodes; it needs one per context, n + 1";
  if (draft.deterministic) {
    SEED_CHECK(draft.q.empty(), kInvalidArgument)
        << "draft is deterministic but q has " << draft.q.size()
        << " rows; pass q empty, or set deterministic = false to verify against q";
  } else if (n > 0) {  // an empty draft needs no q: the target just samples
    SEED_CHECK(draft.q.size() == static_cast<size_t>(n) + 1, kInvalidArgument)
        << "draft q has " << draft.q.size() << " rows, expected one per context, n + 1 = " << n + 1
        << "; a sampling drafter must return q at every context (or set deterministic)";
    for (size_t c = 0; c < draft.q.size(); ++c) {
      const DraftRow& row = draft.q[c];
      SEED_CHECK(row.ids.size() == row.probs.size(), kInvalidArgument)
          << "draft q row " << c << " has " << row.ids.size() << " ids but " << row.probs.size() << " probs";
      for (const int32_t id : row.ids) {
        SEED_CHECK(id >= 0 && id < vocab, kInvalidArgument)
            << "draft q row " << c << " names token " << id << ", outside the vocab [0, " << vocab << ")";
      }
    }
  }

  for (int32_t i = 0; i < n; ++i) {
    const int32_t parent = draft.parents[static_cast<size_t>(i)];
    SEED_CHECK(parent >= -1 && parent < i, kInvalidArgument)
        << "draft node " << i << " has parent " << parent
        << "; parents must be -1 (the prefix) or an earlier node (topological order)";
    const int32_t token = draft.tokens[static_cast<size_t>(i)];
    SEED_CHECK(token >= 0 && token < vocab, kInvalidArgument)
        << "draft node " << i << " proposes token " << token << ", outside the vocab [0, " << vocab << ")";
    if (!draft.deterministic) {
      // The ratio p / q needs q(x) > 0; a drafter cannot have sampled x otherwise.
      const float q_x = draft.q[static_cast<size_t>(parent + 1)].prob(token);
      SEED_CHECK(q_x > 0.0f, kInvalidArgument)
          << "draft node " << i << " proposes token " << token << " but q of its context " << parent + 1
          << " gives it " << q_x
          << "; q must be the distribution the token was drawn from (lookup drafters: set "
             "deterministic)";
    }
  }
}

// The id of the next child of `context` (node context - 1) at or after node
// `from`, or n if none is left. A child's id is larger than its parent's
// (topological order), so scanning from the context's own id finds them all,
// in the order the drafter sampled them.
int32_t next_child(const DraftTree& draft, int32_t context, int32_t from) {
  const int32_t n = static_cast<int32_t>(draft.parents.size());
  for (int32_t i = std::max(from, context); i < n; ++i) {
    if (draft.parents[static_cast<size_t>(i)] == context - 1) return i;
  }
  return n;
}

// Matching: at each context the target's own token, `token_at(context,
// depth)`, is the one kept; the first child equal to it is accepted and the
// walk goes on from there, else it is the verdict's last token.
template <typename TokenAt>
void walk_matching(const VerifyRequest& request, Walk& walk, TokenAt token_at) {
  const DraftTree& draft = *request.draft;
  const int32_t n = static_cast<int32_t>(draft.tokens.size());
  int32_t context = 0;
  for (uint32_t depth = 0;; ++depth) {
    const int32_t kept = token_at(context, depth);
    int32_t child = next_child(draft, context, 0);
    while (child < n && draft.tokens[static_cast<size_t>(child)] != kept) {
      child = next_child(draft, context, child + 1);
    }
    if (child == n) {
      walk.bonus = kept;
      return;
    }
    walk.accepted.push_back(child);
    context = child + 1;
  }
}

// r(v), reading p at v only where r is p's multiple.
double residual_at(const Residual& r, TargetRows& p, int64_t context, int32_t v) {
  for (size_t j = 0; j < r.ids.size(); ++j) {
    if (r.ids[j] == v) return r.values[j];
  }
  return r.rest * p.prob(context, v);
}

// Replaces r by norm(max(0, r - q)) for a rejected candidate x (q = one-hot
// at x when `q` is null). q is zero off its support, where max(0, r - q) =
// r: only the support changes, and as r sums to 1 the new mass is 1 less
// what the subtraction took there, so no row is read. A mass below
// kMinResidualMass is rounding noise: r becomes p.
void subtract_rejected(Residual& r, TargetRows& p, int64_t context, const DraftRow* q, int32_t x) {
  double taken = 0.0;
  const auto subtract = [&](int32_t v, double q_v) {
    size_t j = static_cast<size_t>(std::find(r.ids.begin(), r.ids.end(), v) - r.ids.begin());
    if (j == r.ids.size()) {
      r.ids.push_back(v);
      r.values.push_back(r.rest * p.prob(context, v));
    }
    const double after = std::max(0.0, r.values[j] - q_v);
    taken += r.values[j] - after;
    r.values[j] = after;
  };
  if (q == nullptr) {
    subtract(x, 1.0);
  } else {
    for (size_t j = 0; j < q->ids.size(); ++j) subtract(q->ids[j], q->probs[j]);
  }
  const double mass = 1.0 - taken;
  if (!(mass > kMinResidualMass)) {
    r = Residual{};
    return;
  }
  r.rest /= mass;
  for (double& value : r.values) value /= mass;
}

// q with x removed and renormalised into `out` (which `q` may alias).
const DraftRow* remove_token(const DraftRow& q, int32_t x, DraftRow& out) {
  if (&out != &q) out = q;
  double mass = 0.0;
  for (size_t j = 0; j < out.ids.size(); ++j) {
    if (out.ids[j] == x) out.probs[j] = 0.0f;
    mass += out.probs[j];
  }
  if (mass > 0.0) {
    for (float& value : out.probs) value = static_cast<float>(value / mass);
  }
  return &out;
}

// Sampling / tree: SpecInfer's multi-candidate recursive rejection, one
// context at a time from the prefix (see the comment at the top). Until a
// rejection the residual is p itself.
void walk_sampling(const VerifyRequest& request, Walk& walk) {
  const DraftTree& draft = *request.draft;
  TargetRows& p = *request.target;
  const int32_t n = static_cast<int32_t>(draft.tokens.size());
  DraftRow q_left;  // without replacement: q less the rejected siblings
  int32_t context = 0;
  uint32_t depth = 0;  // tokens between the prefix and `context`
  for (;;) {
    const DraftRow* q = draft.deterministic ? nullptr : &draft.q[static_cast<size_t>(context)];
    const uint32_t position = request.base_position + depth;
    Residual r;
    // Without replacement: q without the rejected siblings, renormalised
    // (copied on the first rejection).
    const bool shrink = q != nullptr && draft.without_replacement;
    int32_t accepted = n;
    uint32_t rank = 0;
    for (int32_t child = next_child(draft, context, 0); child < n;
         child = next_child(draft, context, child + 1), ++rank) {
      const int32_t x = draft.tokens[static_cast<size_t>(child)];
      const double q_x = q != nullptr ? q->prob(x) : 1.0;
      SEED_CHECK(q_x > 0.0, kInvalidArgument)
          << "draft node " << child << " repeats token " << x
          << " of an earlier sibling; children drawn without replacement are distinct";
      const double u = uniform({request.seed, request.request, position, RngPurpose::kAccept, rank});
      // u < min(1, r(x) / q(x))  <=>  u * q(x) < r(x), for u in [0, 1), q(x) > 0.
      if (u * q_x < residual_at(r, p, context, x)) {
        accepted = child;
        break;
      }
      subtract_rejected(r, p, context, q, x);
      if (shrink) q = remove_token(*q, x, q_left);
    }
    if (accepted == n) {
      const double u = uniform({request.seed, request.request, position, RngPurpose::kResample, 0});
      walk.draw = FinalDraw{context, std::move(r), u, std::nullopt};
      return;
    }
    walk.accepted.push_back(accepted);
    context = accepted + 1;
    ++depth;
  }
}

}  // namespace

float DraftRow::prob(int32_t token) const {
  for (size_t j = 0; j < ids.size(); ++j) {
    if (ids[j] == token) return probs[j];
  }
  return 0.0f;
}

Walk walk(const VerifyRequest& request) {
  check_request(request);
  Walk walk;
  TargetRows& p = *request.target;
  if (p.sampling().greedy()) {
    walk_matching(request, walk, [&](int64_t context, uint32_t) { return p.argmax(context); });
  } else if (matches_target_draws(request)) {
    walk_matching(request, walk, [&](int64_t context, uint32_t depth) {
      return p.sample(context, target_stream(request.seed, request.request, request.base_position + depth));
    });
  } else {
    walk_sampling(request, walk);
  }
  return walk;
}

uint64_t target_stream(uint64_t seed, uint64_t request, uint32_t position) {
  return stream_bits({seed, request, position, RngPurpose::kResample, 0});
}

bool matches_target_draws(const VerifyRequest& request) {
  return !request.target->sampling().greedy() && (request.draft->deterministic || request.draft->tokens.empty());
}

std::vector<FinalDraw> target_draws(const VerifyRequest& request) {
  check_request(request);
  const DraftTree& draft = *request.draft;
  std::vector<uint32_t> depth(draft.parents.size() + 1, 0);  // per context; parents come first
  std::vector<FinalDraw> draws;
  for (size_t c = 0; c < depth.size(); ++c) {
    if (c > 0) depth[c] = depth[static_cast<size_t>(draft.parents[c - 1] + 1)] + 1;
    draws.push_back({static_cast<int64_t>(c), Residual{}, 0.0,
                     target_stream(request.seed, request.request, request.base_position + depth[c])});
  }
  return draws;
}

void draw_target_tokens(const std::vector<VerifyRequest>& requests) {
  std::vector<TargetRows*> targets;
  std::vector<FinalDraw> draws;
  for (const VerifyRequest& request : requests) {
    if (!matches_target_draws(request)) continue;
    for (FinalDraw& draw : target_draws(request)) {
      targets.push_back(request.target);
      draws.push_back(std::move(draw));
    }
  }
  std::vector<const FinalDraw*> pointers;
  for (const FinalDraw& draw : draws) pointers.push_back(&draw);
  const std::vector<int32_t> tokens = draw_final_tokens(targets, pointers);
  for (size_t i = 0; i < draws.size(); ++i) targets[i]->set_sample(draws[i].context, tokens[i]);
}

Verdict verdict_of(const DraftTree& draft, Walk walk, int32_t last) {
  Verdict verdict;
  verdict.accepted = std::move(walk.accepted);
  verdict.bonus = last;
  verdict.tokens.reserve(verdict.accepted.size() + 1);
  for (const int32_t node : verdict.accepted) verdict.tokens.push_back(draft.tokens[static_cast<size_t>(node)]);
  verdict.tokens.push_back(last);
  return verdict;
}

Verdict verify(const VerifyRequest& request) {
  Walk w = walk(request);
  const int32_t last = w.draw ? request.target->draw(*w.draw) : w.bonus;
  return verdict_of(*request.draft, std::move(w), last);
}

}  // namespace seed::spec
