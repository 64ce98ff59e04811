#include "spec/drafters/model/draft_tree_growth.h"

#include <cstdint>
#include <torch/torch.h>

#include <algorithm>
#include <numeric>
#include <optional>

#include "models/base/counter_rng.h"
#include "models/base/error.h"
#include "spec/api/verifier.h"
#include "spec/api/target_rows.h"
#include "spec/drafters/model/pruned_tree_builder.h"
#include "spec/engine/logit_summary.h"

namespace seed::spec {

namespace {

// The `count` largest entries of logits, distinct, best first (greedy
// siblings; ties to the lower column as argmax does).
std::vector<int32_t> top_columns(const float* logits, int64_t columns, int count) {
  std::vector<int32_t> order(columns);
  std::iota(order.begin(), order.end(), 0);
  const auto better = [&](int32_t a, int32_t b) { return logits[a] > logits[b] || (logits[a] == logits[b] && a < b); };
  count = static_cast<int>(std::min<int64_t>(count, columns));
  std::partial_sort(order.begin(), order.begin() + count, order.end(), better);
  order.resize(count);
  return order;
}

// The LM head's columns as tokens: column j scores token tokens[j], or
// token j where the head scores every token (tokens null).
struct HeadColumns {
  const int64_t* tokens = nullptr;
  int64_t count = 0;

  int32_t token(int64_t column) const { return static_cast<int32_t>(tokens != nullptr ? tokens[column] : column); }
  // race_from over a row of these columns: the winner's column.
  int32_t race(const float* weights, uint64_t stream) const {
    return tokens != nullptr ? race_from(weights, tokens, count, stream) : race_from(weights, count, stream);
  }
};

// The support of sampling_distribution(logits, params) as a DraftRow of
// tokens, most likely first (ties to the lower token). `dense` is scratch
// of a row's floats.
DraftRow sparse_distribution(const float* logits, const HeadColumns& head, const SamplingParams& params,
                             std::vector<float>& dense) {
  dense.resize(static_cast<size_t>(head.count));
  sampling_distribution(logits, head.count, params, dense.data());
  TopTokens support = top_entries(dense.data(), head.count, static_cast<int>(head.count));
  for (int32_t& id : support.ids) id = head.token(id);
  return {std::move(support.ids), std::move(support.probs)};
}

// The columns of the k children of a deterministic tree at `position`: the
// top k, except that a sampled request's first child is the winner of the
// race the target runs there, run over q (`race_q`, the draft's
// distribution under the request's sampling): the target's own token
// wherever q is close to p, where q's top token is only p(top) likely to be.
std::vector<int32_t> deterministic_children(const float* logits, const HeadColumns& head,
                                            const DraftSettings& settings, const float* race_q, uint32_t position,
                                            int k) {
  if (race_q == nullptr) return top_columns(logits, head.count, k);
  const int32_t winner = head.race(race_q, target_stream(settings.seed, settings.stream, position));
  std::vector<int32_t> children = {winner};
  for (const int32_t column : top_columns(logits, head.count, k)) {
    if (column != winner && static_cast<int>(children.size()) < k) children.push_back(column);
  }
  return children;
}

// The k tokens a tree of draws from q' (`params`) draws after `parent`
// (-1: the prefix) at `position`; the row of q' goes to tree.q.
std::vector<int32_t> drawn_children(const float* logits, const HeadColumns& head, const DraftSettings& settings,
                                    const SamplingParams& params, int32_t parent, uint32_t position, int k,
                                    DraftTree& tree, std::vector<float>& dense) {
  // Row c of q is context c: the prefix (c = 0) or the path to node c - 1.
  const size_t context = static_cast<size_t>(parent + 1);
  tree.q.resize(std::max(tree.q.size(), context + 1));
  DraftRow& q = tree.q[context];
  q = sparse_distribution(logits, head, params, dense);
  std::vector<int32_t> tokens;
  for (int c = 0; c < k; ++c) {
    // Unique per draw and a function of the tree's shape only.
    const uint32_t index = static_cast<uint32_t>((parent + 1) * kMaxDraftChildren + c);
    const RngKey key{settings.seed, settings.stream, position, RngPurpose::kDraft, index};
    const int32_t j = sample_from(q.probs.data(), static_cast<int64_t>(q.probs.size()), uniform(key));
    tokens.push_back(q.ids[static_cast<size_t>(j)]);
  }
  return tokens;
}

// A frontier node's children, most likely (or first drawn) first, with the
// draft's confidence in each.
struct Children {
  std::vector<int32_t> tokens;
  std::vector<float> confidence;
};

}  // namespace

void check_draft_start(const char* drafter, uint64_t slot, const std::vector<int32_t>& tokens,
                       const DraftSettings& settings) {
  SEED_CHECK(!tokens.empty(), kInvalidArgument) << drafter << ": slot " << slot << " started with no tokens";
  SEED_CHECK(!settings.k_config.empty(), kInvalidArgument) << drafter << ": empty k_config";
  for (int k : settings.k_config) {
    SEED_CHECK(k >= 1 && k <= kMaxDraftChildren, kInvalidArgument)
        << drafter << ": k_config entry " << k << " outside [1, " << kMaxDraftChildren << "]";
  }
}

namespace {

// One tree's growth: its frontier (the nodes whose children the next level
// draws, each with its cache sequence) and what it has drawn so far.
class TreeGrowth {
 public:
  struct Open {
    int32_t node;
    models::SequenceId sequence;
  };

  TreeGrowth(const TreeToGrow& job, const HeadColumns& head, const DraftTruncation& cut)
      : job_(job),
        head_(head),
        deterministic_(!job.settings->draws_from_q()),
        truncated_(cut.applied_to(job.settings->sampling)) {
    out_.tree.deterministic = deterministic_;
    frontier_ = {{-1, job.main}};
    if (job.settings->pruned) pruned_.emplace(*job.settings->pruned);
    // The draft's confidence in its tokens, even for greedy requests: its
    // own distribution at temperature 1.
    const SamplingParams& sampling = job.settings->sampling;
    confidence_ = sampling.greedy() ? SamplingParams{} : sampling;
    if (pruned_ || deterministic_) confidence_row_.resize(static_cast<size_t>(head.count));
  }

  // Whether level `d` has nodes to draw children for.
  bool open(int d) const { return d < job_.depth && !frontier_.empty(); }
  size_t frontier_size() const { return frontier_.size(); }
  // Whether its children are top tokens (and a sampled request's race
  // winner) alone, which a summary of the rows gives (summarised_children);
  // pruned trees and draws from q read whole rows.
  bool takes_top_tokens() const { return deterministic_ && !pruned_; }
  int children_at(int d) const { return job_.settings->k_config[static_cast<size_t>(d)]; }
  // The distribution the draft's confidence is read from.
  const SamplingParams& confidence() const { return confidence_; }
  // The stream of the target's race at level d's position, which a sampled
  // request's first child wins; none for a greedy request.
  std::optional<uint64_t> race_at(int d) const {
    if (job_.settings->sampling.greedy()) return std::nullopt;
    return target_stream(job_.settings->seed, job_.settings->stream, static_cast<uint32_t>(job_.position + d));
  }

  // Draws level d's children and moves the frontier to those that expand,
  // forking their cache sequences; appends their inputs to `feed`. From
  // `rows` (row f: frontier node f's context in the head's columns, in host
  // memory) or, where given, `chosen` (frontier node f's children:
  // chosen[f]).
  void draw_level(int d, const float* rows, const Children* chosen, models::KvCache& cache, bool shareable,
                  std::vector<models::SequenceInput>& feed) {
    const int k = job_.settings->k_config[d];
    const bool last_level = d + 1 == job_.depth;
    DraftTree& tree = out_.tree;
    std::vector<Open> next;
    for (size_t f = 0; f < frontier_.size(); ++f) {
      const Open& open = frontier_[f];
      const float* row = rows != nullptr ? rows + static_cast<int64_t>(f) * head_.count : nullptr;
      std::vector<int32_t> children;  // node indices, most likely (or first drawn) first
      size_t expanding = last_level ? 0 : static_cast<size_t>(k);
      if (pruned_) {
        // The builder's tokens are the head's columns until finish().
        sampling_distribution(row, head_.count, confidence_, confidence_row_.data());
        const int32_t first = pruned_->size();
        expanding = static_cast<size_t>(
            pruned_->add_children(open.node, confidence_row_.data(), head_.count, k, !last_level));
        for (int32_t node = first; node < pruned_->size(); ++node) children.push_back(node);
      } else {
        const Children drawn = chosen != nullptr ? chosen[f] : children_from_row(d, open.node, row);
        for (size_t c = 0; c < drawn.tokens.size(); ++c) {
          children.push_back(static_cast<int32_t>(tree.tokens.size()));
          tree.tokens.push_back(drawn.tokens[c]);
          tree.parents.push_back(open.node);
          tree.confidence.push_back(drawn.confidence[c]);
        }
      }
      for (size_t c = 0; c < std::min(children.size(), expanding); ++c) {
        const int32_t node = children[c];
        // Forks first: the parent's sequence must not grow before it is shared.
        const models::SequenceId sequence = c == 0 ? open.sequence : cache.fork(open.sequence);
        if (c > 0) out_.forks.push_back(sequence);
        if (sequence == job_.main) out_.main_path.push_back(node);
        next.push_back({node, sequence});
      }
    }
    for (const Open& open : next) {
      const int32_t token =
          pruned_ ? head_.token(pruned_->token(open.node)) : tree.tokens[static_cast<size_t>(open.node)];
      models::SequenceInput input{open.sequence, {token}, {}};
      if (!shareable) input.shareable = 0;
      feed.push_back(std::move(input));
    }
    frontier_ = std::move(next);
  }

  GrownDraft finish() {
    if (pruned_) {
      // Pruning keeps every expanded node, so the main path survives it.
      std::vector<int32_t> renumbered;
      out_.tree = pruned_->finish(&renumbered);
      for (int32_t& column : out_.tree.tokens) column = head_.token(column);
      for (int32_t& node : out_.main_path) node = renumbered[static_cast<size_t>(node)];
    } else if (!deterministic_) {
      out_.tree.q.resize(out_.tree.tokens.size() + 1);
    }
    return std::move(out_);
  }

 private:
  // The children of `node` at level d from its context's logits `row`.
  Children children_from_row(int d, int32_t node, const float* row) {
    const uint32_t at = static_cast<uint32_t>(job_.position + d);
    Children out;
    if (!deterministic_) {
      out.tokens = drawn_children(row, head_, *job_.settings, truncated_, node, at, children_at(d), out_.tree, dense_);
      for (const int32_t token : out.tokens) {
        out.confidence.push_back(out_.tree.q[static_cast<size_t>(node + 1)].prob(token));
      }
      return out;
    }
    sampling_distribution(row, head_.count, confidence_, confidence_row_.data());
    const float* race_q = job_.settings->sampling.greedy() ? nullptr : confidence_row_.data();
    for (const int32_t column : deterministic_children(row, head_, *job_.settings, race_q, at, children_at(d))) {
      out.tokens.push_back(head_.token(column));
      out.confidence.push_back(confidence_row_[static_cast<size_t>(column)]);
    }
    return out;
  }

  TreeToGrow job_;
  HeadColumns head_;
  bool deterministic_;  // top tokens, not draws from q'
  SamplingParams truncated_;
  SamplingParams confidence_;
  std::vector<float> confidence_row_;
  std::vector<float> dense_;  // scratch for q' rows
  std::optional<PrunedTreeBuilder> pruned_;
  std::vector<Open> frontier_;
  GrownDraft out_;
};

// Level d's children of every frontier node of the open growths that take
// top tokens (per growth, per frontier node; empty for the others), from
// summaries computed where `logits` are (logit_summary.h): per row its top
// entries and softmax scale, and the race winners of sampled requests drawn
// there in one batch. Only a winner outside its row's top entries brings
// that row to the host, for its confidence.
std::vector<std::vector<Children>> summarised_children(std::vector<TreeGrowth>& growths, int d,
                                                       const at::Tensor& logits, int64_t vocab) {
  static const DraftTree kContextOnly;  // one row: the node's context
  std::vector<std::vector<Children>> children(growths.size());
  std::vector<SummaryItem> items;
  std::vector<std::pair<size_t, size_t>> node_of;  // per item: (growth, frontier node)
  int64_t row = 0;
  for (size_t g = 0; g < growths.size(); ++g) {
    TreeGrowth& growth = growths[g];
    if (!growth.open(d)) continue;
    const auto frontier = static_cast<int64_t>(growth.frontier_size());
    if (growth.takes_top_tokens()) {
      children[g].resize(static_cast<size_t>(frontier));
      for (int64_t f = 0; f < frontier; ++f) {
        items.push_back({row + f, &kContextOnly, growth.confidence(), growth.children_at(d)});
        node_of.emplace_back(g, static_cast<size_t>(f));
      }
    }
    row += frontier;
  }
  if (items.empty()) return children;
  std::vector<LogitSummary> summaries = summarize_logits(logits, items);
  std::vector<std::vector<int32_t>> top(items.size());  // by logit, as top_tokens orders them
  for (size_t i = 0; i < items.size(); ++i) {
    const LogitSummary& s = summaries[i];
    for (int j = 0; j < std::min(items[i].top, s.top); ++j) top[i].push_back(s.top_logits[static_cast<size_t>(j)].token);
  }
  std::vector<TargetRows> rows;
  rows.reserve(items.size());
  for (size_t i = 0; i < items.size(); ++i) rows.emplace_back(std::move(summaries[i]), vocab, items[i].sampling);
  std::vector<TargetRows*> racing;
  std::vector<FinalDraw> races;
  for (size_t i = 0; i < items.size(); ++i) {
    if (const std::optional<uint64_t> race = growths[node_of[i].first].race_at(d)) {
      racing.push_back(&rows[i]);
      races.push_back({0, Residual{}, 0.0, race});
    }
  }
  std::vector<const FinalDraw*> race_ptrs;
  for (const FinalDraw& race : races) race_ptrs.push_back(&race);
  const std::vector<int32_t> winners = draw_final_tokens(racing, race_ptrs);
  size_t next_winner = 0;
  for (size_t i = 0; i < items.size(); ++i) {
    Children& c = children[node_of[i].first][node_of[i].second];
    const bool races_here = next_winner < racing.size() && racing[next_winner] == &rows[i];
    if (races_here) c.tokens.push_back(winners[next_winner++]);
    for (const int32_t token : top[i]) {
      if (static_cast<int>(c.tokens.size()) == items[i].top) break;
      if (!races_here || token != c.tokens.front()) c.tokens.push_back(token);
    }
    for (const int32_t token : c.tokens) c.confidence.push_back(rows[i].prob(0, token));
  }
  return children;
}

}  // namespace

std::vector<GrownDraft> grow_draft_trees(const models::CausalLM& model, models::KvCache& cache,
                                         const std::vector<TreeToGrow>& trees, at::Tensor logits,
                                         const DraftTruncation& cut, bool shareable, LogitReads reads) {
  const int64_t vocab = model.config().vocab_size;
  SEED_CHECK(logits.size(0) == static_cast<int64_t>(trees.size()), kInternal)
      << "grow_draft_trees: " << logits.size(0) << " logits rows for " << trees.size() << " trees";
  const at::Tensor& head_tokens = model.head_tokens();
  const HeadColumns head{head_tokens.defined() ? head_tokens.data_ptr<int64_t>() : nullptr, logits.size(1)};
  std::vector<TreeGrowth> growths;
  growths.reserve(trees.size());
  int depth = 0;
  for (const TreeToGrow& job : trees) {
    growths.emplace_back(job, head, cut);
    depth = std::max(depth, job.depth);
  }
  // Level d's rows: the open trees' frontiers, in tree order (the previous
  // level's feed, or the trees' contexts).
  for (int d = 0; d < depth; ++d) {
    // Rows on a GPU stay there for the trees that take top tokens: a
    // summary of each crosses to the host, not its vocabulary of logits.
    // A summary costs a few dozen kernel launches, a host pass a few
    // nanoseconds a logit: below kSummarisedLogits the rows cross.
    constexpr int64_t kSummarisedLogits = int64_t{1} << 16;
    const bool summarise = reads == LogitReads::kDeviceSummary ||
                           (!logits.device().is_cpu() && logits.numel() >= kSummarisedLogits);
    const std::vector<std::vector<Children>> chosen =
        summarise ? summarised_children(growths, d, model.vocabulary_logits(logits), vocab)
                  : std::vector<std::vector<Children>>(growths.size());
    const bool rows_needed = std::any_of(growths.begin(), growths.end(), [&](const TreeGrowth& growth) {
      return growth.open(d) && !(summarise && growth.takes_top_tokens());
    });
    const at::Tensor rows = rows_needed ? logits.to(torch::kCPU).contiguous() : at::Tensor();
    const float* row = rows_needed ? rows.data_ptr<float>() : nullptr;
    std::vector<models::SequenceInput> feed;
    for (size_t g = 0; g < growths.size(); ++g) {
      TreeGrowth& growth = growths[g];
      if (!growth.open(d)) continue;
      const size_t drawn_from = growth.frontier_size();
      growth.draw_level(d, row, chosen[g].empty() ? nullptr : chosen[g].data(), cache, shareable, feed);
      if (row != nullptr) row += static_cast<int64_t>(drawn_from) * head.count;
    }
    if (feed.empty()) break;
    logits = model.forward_head(feed, cache, models::LogitsFor::kLast);
  }
  std::vector<GrownDraft> out;
  out.reserve(growths.size());
  for (TreeGrowth& growth : growths) out.push_back(growth.finish());
  return out;
}

}  // namespace seed::spec
