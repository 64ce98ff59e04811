#include "spec/drafters/model/draft_tree_growth.h"

#include <cstdint>
#include <torch/torch.h>

#include <algorithm>
#include <numeric>
#include <optional>

#include "models/base/counter_rng.h"
#include "models/base/error.h"
#include "spec/api/verifier.h"
#include "spec/drafters/model/pruned_tree_builder.h"

namespace seed::spec {

namespace {

// The `count` largest entries of logits, distinct, best first (greedy
// siblings; ties to the lower id as argmax does).
std::vector<int32_t> top_tokens(const float* logits, int64_t vocab, int count) {
  std::vector<int32_t> ids(vocab);
  std::iota(ids.begin(), ids.end(), 0);
  const auto better = [&](int32_t a, int32_t b) { return logits[a] > logits[b] || (logits[a] == logits[b] && a < b); };
  count = static_cast<int>(std::min<int64_t>(count, vocab));
  std::partial_sort(ids.begin(), ids.begin() + count, ids.end(), better);
  ids.resize(count);
  return ids;
}

// The support of sampling_distribution(logits, params) as a DraftRow, most
// likely first (ties to the lower id). `dense` is scratch of vocab floats.
DraftRow sparse_distribution(const float* logits, int64_t vocab, const SamplingParams& params,
                             std::vector<float>& dense) {
  dense.resize(static_cast<size_t>(vocab));
  sampling_distribution(logits, vocab, params, dense.data());
  TopTokens support = top_entries(dense.data(), vocab, static_cast<int>(vocab));
  return {std::move(support.ids), std::move(support.probs)};
}

// The k children of a deterministic tree at `position`: the top k tokens,
// except that a sampled request's first child is the winner of the race
// the target runs there, run over q (`race_q`, the draft's distribution
// under the request's sampling): the target's own token wherever q is close
// to p, where q's top token is only p(top) likely to be.
std::vector<int32_t> deterministic_children(const float* logits, int64_t vocab, const DraftSettings& settings,
                                            const float* race_q, uint32_t position, int k) {
  if (race_q == nullptr) return top_tokens(logits, vocab, k);
  const int32_t winner = race_from(race_q, vocab, target_stream(settings.seed, settings.stream, position));
  std::vector<int32_t> children = {winner};
  for (const int32_t token : top_tokens(logits, vocab, k)) {
    if (token != winner && static_cast<int>(children.size()) < k) children.push_back(token);
  }
  return children;
}

// The k children a fixed shape gives the node after `parent` (-1: the
// prefix), at `position`: deterministic_children for a deterministic tree,
// else k draws from q' (`params`), whose row it stores in tree.q.
std::vector<int32_t> fixed_children(const float* logits, int64_t vocab, const DraftSettings& settings,
                                    const SamplingParams& params, const float* race_q, int32_t parent,
                                    uint32_t position, int k, DraftTree& tree, std::vector<float>& dense) {
  if (tree.deterministic) return deterministic_children(logits, vocab, settings, race_q, position, k);
  // Row c of q is context c: the prefix (c = 0) or the path to node c - 1.
  const size_t context = static_cast<size_t>(parent + 1);
  tree.q.resize(std::max(tree.q.size(), context + 1));
  DraftRow& q = tree.q[context];
  q = sparse_distribution(logits, vocab, params, dense);
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

  TreeGrowth(const TreeToGrow& job, int64_t vocab, const DraftTruncation& cut)
      : job_(job),
        vocab_(vocab),
        deterministic_(!job.settings->draws_from_q()),
        truncated_(cut.applied_to(job.settings->sampling)) {
    out_.tree.deterministic = deterministic_;
    frontier_ = {{-1, job.main}};
    if (job.settings->pruned) pruned_.emplace(*job.settings->pruned);
    // The draft's confidence in its tokens, even for greedy requests: its
    // own distribution at temperature 1.
    const SamplingParams& sampling = job.settings->sampling;
    confidence_ = sampling.greedy() ? SamplingParams{} : sampling;
    if (pruned_ || deterministic_) confidence_row_.resize(static_cast<size_t>(vocab));
  }

  // Whether level `d` has nodes to draw children for.
  bool open(int d) const { return d < job_.depth && !frontier_.empty(); }
  size_t frontier_size() const { return frontier_.size(); }

  // Draws level d's children from `rows` (row f: frontier node f's
  // context) and moves the frontier to those that expand, forking their
  // cache sequences; appends their inputs to `feed`.
  void draw_level(int d, const float* rows, models::KvCache& cache, bool shareable,
                  std::vector<models::SequenceInput>& feed) {
    const int k = job_.settings->k_config[d];
    const bool last_level = d + 1 == job_.depth;
    DraftTree& tree = out_.tree;
    std::vector<Open> next;
    for (size_t f = 0; f < frontier_.size(); ++f) {
      const Open& open = frontier_[f];
      const float* row = rows + static_cast<int64_t>(f) * vocab_;
      std::vector<int32_t> children;  // node indices, most likely (or first drawn) first
      size_t expanding = last_level ? 0 : static_cast<size_t>(k);
      if (pruned_) {
        sampling_distribution(row, vocab_, confidence_, confidence_row_.data());
        const int32_t first = pruned_->size();
        expanding =
            static_cast<size_t>(pruned_->add_children(open.node, confidence_row_.data(), vocab_, k, !last_level));
        for (int32_t node = first; node < pruned_->size(); ++node) children.push_back(node);
      } else {
        const uint32_t at = static_cast<uint32_t>(job_.position + d);
        if (deterministic_) sampling_distribution(row, vocab_, confidence_, confidence_row_.data());
        const float* race_q = deterministic_ && !job_.settings->sampling.greedy() ? confidence_row_.data() : nullptr;
        for (const int32_t token :
             fixed_children(row, vocab_, *job_.settings, truncated_, race_q, open.node, at, k, tree, dense_)) {
          children.push_back(static_cast<int32_t>(tree.tokens.size()));
          tree.tokens.push_back(token);
          tree.parents.push_back(open.node);
          tree.confidence.push_back(deterministic_ ? confidence_row_[static_cast<size_t>(token)]
                                                   : tree.q[static_cast<size_t>(open.node + 1)].prob(token));
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
      const int32_t token = pruned_ ? pruned_->token(open.node) : tree.tokens[static_cast<size_t>(open.node)];
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
      for (int32_t& node : out_.main_path) node = renumbered[static_cast<size_t>(node)];
    } else if (!deterministic_) {
      out_.tree.q.resize(out_.tree.tokens.size() + 1);
    }
    return std::move(out_);
  }

 private:
  TreeToGrow job_;
  int64_t vocab_;
  bool deterministic_;  // top tokens, not draws from q'
  SamplingParams truncated_;
  SamplingParams confidence_;
  std::vector<float> confidence_row_;
  std::vector<float> dense_;  // scratch for q' rows
  std::optional<PrunedTreeBuilder> pruned_;
  std::vector<Open> frontier_;
  GrownDraft out_;
};

}  // namespace

std::vector<GrownDraft> grow_draft_trees(const models::CausalLM& model, models::KvCache& cache,
                                         const std::vector<TreeToGrow>& trees, at::Tensor logits,
                                         const DraftTruncation& cut, bool shareable) {
  const int64_t vocab = model.config().vocab_size;
  SEED_CHECK(logits.size(0) == static_cast<int64_t>(trees.size()), kInternal)
      << "grow_draft_trees: " << logits.size(0) << " logits rows for " << trees.size() << " trees";
  std::vector<TreeGrowth> growths;
  growths.reserve(trees.size());
  int depth = 0;
  for (const TreeToGrow& job : trees) {
    growths.emplace_back(job, vocab, cut);
    depth = std::max(depth, job.depth);
  }
  // Level d's rows: the open trees' frontiers, in tree order (the previous
  // level's feed, or the trees' contexts).
  for (int d = 0; d < depth; ++d) {
    const at::Tensor rows = logits.to(torch::kCPU).contiguous();
    const float* row = rows.data_ptr<float>();
    std::vector<models::SequenceInput> feed;
    for (TreeGrowth& growth : growths) {
      if (!growth.open(d)) continue;
      const size_t drawn_from = growth.frontier_size();
      growth.draw_level(d, row, cache, shareable, feed);
      row += static_cast<int64_t>(drawn_from) * vocab;
    }
    if (feed.empty()) break;
    logits = model.forward(feed, cache, models::LogitsFor::kLast);
  }
  std::vector<GrownDraft> out;
  out.reserve(growths.size());
  for (TreeGrowth& growth : growths) out.push_back(growth.finish());
  return out;
}

}  // namespace seed::spec
