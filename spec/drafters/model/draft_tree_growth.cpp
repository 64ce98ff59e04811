#include "spec/drafters/model/draft_tree_growth.h"

#include <cstdint>
#include <torch/torch.h>

#include <algorithm>
#include <numeric>
#include <optional>

#include "models/base/counter_rng.h"
#include "models/base/error.h"
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

// The k children a fixed shape gives the node after `parent` (-1: the
// prefix), at `position`: the top k tokens for greedy requests, else k
// draws from q' (`params`), whose row it stores in tree.q.
std::vector<int32_t> fixed_children(const float* logits, int64_t vocab, const DraftSettings& settings,
                                    const SamplingParams& params, int32_t parent, uint32_t position, int k,
                                    DraftTree& tree, std::vector<float>& dense) {
  if (settings.sampling.greedy()) return top_tokens(logits, vocab, k);
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

GrownDraft grow_draft_tree(const models::CausalLM& model, models::KvCache& cache, models::SequenceId main,
                           at::Tensor logits, const DraftSettings& settings, const DraftTruncation& cut,
                           int64_t position, int depth, bool shareable) {
  const int64_t vocab = model.config().vocab_size;
  const bool greedy = settings.sampling.greedy();
  GrownDraft out;
  DraftTree& tree = out.tree;
  tree.deterministic = greedy;
  // The frontier: nodes whose children the next level draws, each with its
  // cache sequence and a row of `logits` holding its context's logits.
  struct Open { int32_t node; models::SequenceId sequence; };
  std::vector<Open> frontier = {{-1, main}};
  std::optional<PrunedTreeBuilder> pruned;
  if (settings.pruned) pruned.emplace(*settings.pruned);
  // The draft's confidence in its tokens, even for greedy requests: its
  // own distribution at temperature 1.
  const SamplingParams confidence = greedy ? SamplingParams{} : settings.sampling;
  std::vector<float> confidence_row(pruned || greedy ? vocab : 0);
  const SamplingParams truncated = cut.applied_to(settings.sampling);
  std::vector<float> dense;  // scratch for q' rows
  for (int d = 0; d < depth; ++d) {
    const at::Tensor rows = logits.to(torch::kCPU).contiguous();
    const int k = settings.k_config[d];
    const bool last_level = d + 1 == depth;
    std::vector<Open> next;
    for (size_t f = 0; f < frontier.size(); ++f) {
      const Open& open = frontier[f];
      const float* row = rows[static_cast<int64_t>(f)].data_ptr<float>();
      std::vector<int32_t> children;  // node indices, most likely (or first drawn) first
      size_t expanding = last_level ? 0 : static_cast<size_t>(k);
      if (pruned) {
        sampling_distribution(row, vocab, confidence, confidence_row.data());
        const int32_t first = pruned->size();
        expanding = static_cast<size_t>(pruned->add_children(open.node, confidence_row.data(), vocab, k, !last_level));
        for (int32_t node = first; node < pruned->size(); ++node) children.push_back(node);
      } else {
        const uint32_t at = static_cast<uint32_t>(position + d);
        if (greedy) sampling_distribution(row, vocab, confidence, confidence_row.data());
        for (const int32_t token : fixed_children(row, vocab, settings, truncated, open.node, at, k, tree, dense)) {
          children.push_back(static_cast<int32_t>(tree.tokens.size()));
          tree.tokens.push_back(token);
          tree.parents.push_back(open.node);
          tree.confidence.push_back(greedy ? confidence_row[static_cast<size_t>(token)]
                                           : tree.q[static_cast<size_t>(open.node + 1)].prob(token));
        }
      }
      for (size_t c = 0; c < std::min(children.size(), expanding); ++c) {
        const int32_t node = children[c];
        // Forks first: the parent's sequence must not grow before it is shared.
        const models::SequenceId sequence = c == 0 ? open.sequence : cache.fork(open.sequence);
        if (c > 0) out.forks.push_back(sequence);
        if (sequence == main) out.main_path.push_back(node);
        next.push_back({node, sequence});
      }
    }
    if (next.empty()) break;
    std::vector<models::SequenceInput> feed;
    for (const Open& open : next) {
      const int32_t token = pruned ? pruned->token(open.node) : tree.tokens[static_cast<size_t>(open.node)];
      models::SequenceInput input{open.sequence, {token}, {}};
      if (!shareable) input.shareable = 0;
      feed.push_back(std::move(input));
    }
    logits = model.forward(feed, cache, models::LogitsFor::kLast);
    frontier = std::move(next);
  }
  if (pruned) {
    // Pruning keeps every expanded node, so the main path survives it.
    std::vector<int32_t> renumbered;
    tree = pruned->finish(&renumbered);
    for (int32_t& node : out.main_path) node = renumbered[static_cast<size_t>(node)];
    return out;
  }
  if (!greedy) tree.q.resize(tree.tokens.size() + 1);
  return out;
}

}  // namespace seed::spec
