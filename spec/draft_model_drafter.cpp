#include "spec/draft_model_drafter.h"

#include <torch/torch.h>

#include <algorithm>
#include <numeric>
#include <optional>

#include "models/base/counter_rng.h"
#include "models/base/error.h"
#include "spec/pruned_tree_builder.h"

namespace seed::spec {

struct DraftModelDrafter::Slot {
  models::SequenceId main = 0;
  bool started = false;        // `main` exists (from the first proposal on)
  DraftSettings settings;
  std::vector<int32_t> unfed;  // accepted tokens not yet in the cache
  int64_t accepted = 0;        // accepted tokens (in the cache or unfed)
  // The last proposal: cache length before it, the nodes fed on the main
  // sequence (its rank-0 path), and the forks its other branches used.
  int64_t base = 0;
  std::vector<int32_t> main_path;
  std::vector<models::SequenceId> forks;
};

namespace {

// Children per node at most; draft uniforms are indexed (parent + 1) * 256 + rank.
constexpr int kMaxChildren = 256;

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

// The k children a fixed shape gives the node after `parent` (-1: the
// prefix), at `position`: the top k tokens for greedy requests, else k
// draws from q, whose row it stores in tree.q.
std::vector<int32_t> fixed_children(const float* logits, int64_t vocab, const DraftSettings& settings,
                                    int32_t parent, uint32_t position, int k, DraftTree& tree) {
  if (settings.sampling.greedy()) return top_tokens(logits, vocab, k);
  // Row c of q is context c: the prefix (c = 0) or the path to node c - 1.
  const size_t offset = static_cast<size_t>(parent + 1) * vocab;
  tree.q.resize(std::max(tree.q.size(), offset + vocab), 0.0f);
  float* q = tree.q.data() + offset;
  sampling_distribution(logits, vocab, settings.sampling, q);
  std::vector<int32_t> tokens;
  for (int c = 0; c < k; ++c) {
    // Unique per draw and a function of the tree's shape only.
    const uint32_t index = static_cast<uint32_t>((parent + 1) * kMaxChildren + c);
    const RngKey key{settings.seed, settings.stream, position, RngPurpose::kDraft, index};
    tokens.push_back(sample_from(q, vocab, uniform(key)));
  }
  return tokens;
}

}  // namespace

DraftModelDrafter::DraftModelDrafter(std::shared_ptr<const models::CausalLM> model,
                                     models::KvCacheOptions cache_options)
    : model_(std::move(model)), cache_(model_->make_cache(cache_options)) {
  SEED_CHECK(model_->shard().is_whole(), kInvalidArgument)
      << "drafter: the draft model is tp rank " << model_->shard().rank << " of " << model_->shard().size
      << "; drafters run whole models";
}

DraftModelDrafter::~DraftModelDrafter() = default;

DraftModelDrafter::Slot& DraftModelDrafter::slot_state(uint64_t slot) {
  const auto it = slots_.find(slot);
  SEED_CHECK(it != slots_.end(), kInvalidArgument) << "drafter: slot " << slot << " was not started";
  return it->second;
}

void DraftModelDrafter::start(uint64_t slot, const std::vector<int32_t>& tokens, const DraftSettings& settings) {
  SEED_CHECK(!tokens.empty(), kInvalidArgument) << "drafter: slot " << slot << " started with no tokens";
  SEED_CHECK(!settings.k_config.empty(), kInvalidArgument) << "drafter: empty k_config";
  for (int k : settings.k_config) {
    SEED_CHECK(k >= 1 && k <= kMaxChildren, kInvalidArgument)
        << "drafter: k_config entry " << k << " outside [1, " << kMaxChildren << "]";
  }
  finish(slot);
  Slot s;
  s.settings = settings;
  s.unfed = tokens;
  s.accepted = static_cast<int64_t>(tokens.size());
  slots_.emplace(slot, std::move(s));
}

DraftTree DraftModelDrafter::propose(uint64_t slot, int max_depth) {
  Slot& s = slot_state(slot);
  release_forks(s);
  s.main_path.clear();
  const int64_t vocab = model_->config().vocab_size;
  const int64_t context = model_->config().max_position_embeddings;
  // Nodes of depth d sit at position accepted + d - 1; the last level is
  // drawn, never fed, so depth D needs positions < accepted + D - 1. A
  // draft model with a shorter context than the target drafts less (down to
  // nothing), never fails.
  const int64_t fits = context - s.accepted + 1;
  const int depth = static_cast<int>(std::min<int64_t>({max_depth, int64_t(s.settings.k_config.size()), fits}));
  DraftTree tree;
  if (depth <= 0) return tree;
  const bool greedy = s.settings.sampling.greedy();
  tree.deterministic = greedy;

  SEED_CHECK(!s.unfed.empty(), kInternal) << "drafter: slot " << slot << " proposed twice without advance";
  if (!s.started) {
    // Started here rather than in start(), so a slot started after another
    // with the same prompt, but proposed after it, reuses its prefix.
    const models::CachedStart start = cache_.create_with_prefix(s.unfed);
    s.main = start.sequence;
    s.started = true;
    s.unfed.erase(s.unfed.begin(), s.unfed.begin() + start.cached);
  }
  at::Tensor logits = model_->forward({{s.main, s.unfed, {}}}, cache_, models::LogitsFor::kLast);
  s.unfed.clear();
  s.base = cache_.length(s.main);

  // The frontier: nodes whose children the next level draws, each with its
  // cache sequence and a row of `logits` holding its context's logits.
  struct Open { int32_t node; models::SequenceId sequence; };
  std::vector<Open> frontier = {{-1, s.main}};
  std::optional<PrunedTreeBuilder> pruned;
  if (s.settings.pruned) pruned.emplace(*s.settings.pruned);
  // The draft's confidence in its tokens, even for greedy requests: its
  // own distribution at temperature 1.
  const SamplingParams confidence = greedy ? SamplingParams{} : s.settings.sampling;
  std::vector<float> confidence_row(pruned ? vocab : 0);
  for (int d = 0; d < depth; ++d) {
    const at::Tensor rows = logits.to(torch::kCPU).contiguous();
    const int k = s.settings.k_config[d];
    const uint32_t position = static_cast<uint32_t>(s.accepted + d);
    const bool last_level = d + 1 == depth;
    std::vector<Open> next;
    std::vector<models::SequenceInput> feed;
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
        for (const int32_t token : fixed_children(row, vocab, s.settings, open.node, position, k, tree)) {
          children.push_back(static_cast<int32_t>(tree.tokens.size()));
          tree.tokens.push_back(token);
          tree.parents.push_back(open.node);
        }
      }
      for (size_t c = 0; c < std::min(children.size(), expanding); ++c) {
        const int32_t node = children[c];
        // Forks first: the parent's sequence must not grow before it is shared.
        const models::SequenceId sequence = c == 0 ? open.sequence : cache_.fork(open.sequence);
        if (c > 0) s.forks.push_back(sequence);
        if (sequence == s.main) s.main_path.push_back(node);
        next.push_back({node, sequence});
      }
    }
    if (next.empty()) break;
    for (const Open& open : next) {
      const int32_t token = pruned ? pruned->token(open.node) : tree.tokens[static_cast<size_t>(open.node)];
      feed.push_back({open.sequence, {token}, {}});
    }
    logits = model_->forward(feed, cache_, models::LogitsFor::kLast);
    frontier = std::move(next);
  }
  if (pruned) {
    // Pruning keeps every expanded node, so the main path survives it.
    std::vector<int32_t> renumbered;
    tree = pruned->finish(&renumbered);
    for (int32_t& node : s.main_path) node = renumbered[static_cast<size_t>(node)];
    return tree;
  }
  if (!greedy) tree.q.resize((tree.tokens.size() + 1) * vocab, 0.0f);
  return tree;
}

void DraftModelDrafter::advance(uint64_t slot, const Verdict& verdict) {
  Slot& s = slot_state(slot);
  release_forks(s);
  // Keep the accepted nodes the main sequence already holds; feed the rest.
  size_t kept = 0;
  while (kept < verdict.accepted.size() && kept < s.main_path.size() &&
         verdict.accepted[kept] == s.main_path[kept]) {
    ++kept;
  }
  if (!s.main_path.empty()) cache_.truncate(s.main, s.base + static_cast<int64_t>(kept));
  s.main_path.clear();
  s.unfed.insert(s.unfed.end(), verdict.tokens.begin() + static_cast<std::ptrdiff_t>(kept), verdict.tokens.end());
  s.accepted += static_cast<int64_t>(verdict.tokens.size());
}

void DraftModelDrafter::finish(uint64_t slot) {
  const auto it = slots_.find(slot);
  if (it == slots_.end()) return;
  release_forks(it->second);
  if (it->second.started) cache_.release(it->second.main);
  slots_.erase(it);
}

void DraftModelDrafter::release_forks(Slot& s) {
  for (models::SequenceId f : s.forks) cache_.release(f);
  s.forks.clear();
}

}  // namespace seed::spec
