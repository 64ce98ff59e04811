#include "spec/drafters/stand/stand_drafter.h"

#include <algorithm>
#include <cstdint>
#include <deque>

#include "models/base/counter_rng.h"
#include "models/base/error.h"
#include "spec/api/gumbel_top_k.h"
#include "spec/drafters/lesson.h"

namespace seed::spec {

StandDrafter::StandDrafter(std::shared_ptr<NgramStore> store, int64_t vocab, std::optional<StaticTree> tree)
    : SlotDrafter("stand drafter"), store_(std::move(store)), vocab_(vocab), tree_(std::move(tree)) {
  if (tree_) accepted_per_node_.assign(static_cast<size_t>(tree_->size()), 0);
  SEED_CHECK(store_ != nullptr, kInvalidArgument) << "stand drafter: no n-gram store";
  SEED_CHECK(vocab_ > 0, kInvalidArgument) << "stand drafter: vocab " << vocab_ << " < 1";
}

void StandDrafter::start(uint64_t slot, const std::vector<int32_t>& tokens, const DraftSettings& settings) {
  slots_.start(slot, tokens,
               StandSlot{tokens, settings, store_->table(settings.group),
                         tree_ ? *tree_ : StaticTree::from_k_config(settings.k_config), {}});
}

DraftTree StandDrafter::propose(uint64_t slot, int max_depth) {
  StandSlot& s = slots_.at(slot);
  s.placed.clear();
  const bool deterministic = !s.settings.draws_from_q();
  DraftTree draft;
  draft.deterministic = deterministic;
  draft.without_replacement = !deterministic;
  std::vector<std::vector<int32_t>> children(static_cast<size_t>(s.tree.size()) + 1);  // [0] = the prefix
  for (int32_t i = 0; i < s.tree.size(); ++i) {
    children[static_cast<size_t>(s.tree.parents[static_cast<size_t>(i)] + 1)].push_back(i);
  }

  // Breadth-first over (static node, draft node); -1 is the prefix. A draft
  // node is appended when its parent is expanded, so parents come first.
  struct Open { int32_t node; int32_t draft_node; int depth; };
  std::deque<Open> open = {{-1, -1, 0}};
  std::vector<int32_t> context;
  std::vector<float> q;
  std::vector<double> uniforms;
  NgramTable::Entry entry;
  while (!open.empty()) {
    const Open at = open.front();
    open.pop_front();
    const std::vector<int32_t>& kids = children[static_cast<size_t>(at.node + 1)];
    if (kids.empty() || at.depth >= max_depth) continue;
    // The last kMaxContext tokens of prefix + path.
    const size_t longest = NgramTable::kMaxContext;
    context.clear();
    for (int32_t n = at.draft_node; n >= 0 && context.size() < longest; n = draft.parents[static_cast<size_t>(n)]) {
      context.push_back(draft.tokens[static_cast<size_t>(n)]);
    }
    for (size_t i = s.tokens.size(); i > 0 && context.size() < longest; --i) context.push_back(s.tokens[i - 1]);
    std::reverse(context.begin(), context.end());
    if (!s.table->lookup(context, &entry)) continue;

    double mass = 0;
    for (const float p : entry.next.probs) mass += p;
    q.assign(entry.next.probs.begin(), entry.next.probs.end());
    for (float& p : q) p = static_cast<float>(p / mass);
    const int m = static_cast<int>(std::min(kids.size(), q.size()));
    std::vector<int> chosen;
    if (deterministic) {
      for (int j = 0; j < m; ++j) chosen.push_back(j);  // entries are most likely first
    } else {
      // Gumbel noise keyed by the child's position and the context's node,
      // so it is fixed per draft position ("cached noise") and independent
      // of the verifier's uniforms (kAccept, kResample).
      const uint32_t position = static_cast<uint32_t>(s.tokens.size()) + static_cast<uint32_t>(at.depth);
      uniforms.resize(q.size());
      for (size_t j = 0; j < q.size(); ++j) {
        const uint32_t index = static_cast<uint32_t>((at.draft_node + 1) * NgramTable::kTopK + static_cast<int>(j));
        uniforms[j] = uniform({s.settings.seed, s.settings.stream, position, RngPurpose::kDraft, index});
      }
      chosen = gumbel_top_k(q, uniforms, m);
      const size_t context = static_cast<size_t>(at.draft_node + 1);
      draft.q.resize(std::max(draft.q.size(), context + 1));
      DraftRow& row = draft.q[context];
      for (size_t j = 0; j < q.size(); ++j) {
        if (q[j] <= 0.0f) continue;  // a row is its support
        row.ids.push_back(entry.next.ids[j]);
        row.probs.push_back(q[j]);
      }
    }
    for (size_t j = 0; j < chosen.size(); ++j) {
      const int32_t node = static_cast<int32_t>(draft.tokens.size());
      draft.tokens.push_back(entry.next.ids[static_cast<size_t>(chosen[j])]);
      draft.parents.push_back(at.draft_node);
      s.placed.push_back(kids[j]);
      open.push_back({kids[j], node, at.depth + 1});
    }
  }
  if (!deterministic) {
    if (draft.tokens.empty()) {
      draft.q.clear();
    } else {
      draft.q.resize(draft.tokens.size() + 1);
    }
  }
  return draft;
}

void StandDrafter::advance(uint64_t slot, const Verdict& verdict) {
  StandSlot& s = slots_.at(slot);
  if (!accepted_per_node_.empty()) {
    for (const int32_t node : verdict.accepted) {
      ++accepted_per_node_[static_cast<size_t>(s.placed[static_cast<size_t>(node)])];
    }
  }
  learn_verdict(*s.table, s.tokens, verdict.tokens, verdict.target_top);
}

}  // namespace seed::spec
