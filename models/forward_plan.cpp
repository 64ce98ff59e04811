#include "models/forward_plan.h"

#include <algorithm>
#include <cstddef>

#include "models/base/error.h"

namespace seed::models {

namespace {

// A chain: each token follows the one before (no parents, or parents i - 1).
bool is_chain(const SequenceInput& in) {
  for (size_t i = 0; i < in.parents.size(); ++i) {
    if (in.parents[i] != static_cast<int32_t>(i) - 1) return false;
  }
  return true;
}

// Depth of each node of a token tree (0 for children of the prefix);
// validates the parent indices.
std::vector<int64_t> tree_depths(const SequenceInput& in) {
  const int64_t n = static_cast<int64_t>(in.tokens.size());
  std::vector<int64_t> depth(n);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t parent = in.parents.empty() ? i - 1 : in.parents[i];
    SEED_CHECK(parent >= -1 && parent < i, kInvalidArgument)
        << "token tree of sequence " << in.sequence << ": node " << i << " has parent " << parent
        << "; parents must be -1 or an earlier node";
    depth[i] = parent < 0 ? 0 : depth[parent] + 1;
  }
  return depth;
}

}  // namespace

ForwardPlan plan_forward(const ModelConfig& config, const std::vector<SequenceInput>& batch, KvCache& cache,
                         LogitsFor which) {
  SEED_CHECK(!batch.empty(), kInvalidArgument) << "forward needs at least one sequence";
  SEED_CHECK(cache.hidden_layer() < config.num_hidden_layers, kInvalidArgument)
      << "the KV cache keeps hidden states of layer " << cache.hidden_layer() << ", but the model has "
      << config.num_hidden_layers << " layers";
  ForwardPlan plan;
  plan.batch = static_cast<int64_t>(batch.size());
  std::vector<std::vector<int64_t>> depths;
  for (const SequenceInput& in : batch) {
    SEED_CHECK(!in.tokens.empty(), kInvalidArgument) << "sequence " << in.sequence << " has no new tokens";
    SEED_CHECK(in.parents.empty() || in.parents.size() == in.tokens.size(), kInvalidArgument)
        << "sequence " << in.sequence << ": " << in.parents.size() << " parents for " << in.tokens.size()
        << " tokens";
    SEED_CHECK(which != LogitsFor::kTail ||
                   (in.logits_from >= 0 && in.logits_from < static_cast<int32_t>(in.tokens.size())),
               kInvalidArgument)
        << "sequence " << in.sequence << ": logits_from " << in.logits_from << " outside its " << in.tokens.size()
        << " new tokens";
    SEED_CHECK(!in.soft_prompt.defined() ||
                   (in.soft_prompt.dim() == 2 && in.soft_prompt.size(1) == config.hidden_size &&
                    in.soft_prompt.size(0) <= static_cast<int64_t>(in.tokens.size())),
               kInvalidArgument)
        << "sequence " << in.sequence << ": a soft prompt must be [n <= " << in.tokens.size() << ", "
        << config.hidden_size << "]";
    for (int32_t token : in.tokens) {
      SEED_CHECK(token >= 0 && token < config.vocab_size, kInvalidArgument)
          << "token id " << token << " is outside the vocabulary [0, " << config.vocab_size << ")";
    }
    depths.push_back(tree_depths(in));
    plan.cached.push_back(cache.length(in.sequence));
    const int64_t last_position = plan.cached.back() + *std::max_element(depths.back().begin(), depths.back().end());
    SEED_CHECK(last_position < config.max_position_embeddings, kOutOfRange)
        << "sequence " << in.sequence << " would reach position " << last_position
        << ", past the model's context of " << config.max_position_embeddings
        << " tokens (max_position_embeddings); shorten the prompt or max_new_tokens";
    plan.seq = std::max<int64_t>(plan.seq, static_cast<int64_t>(in.tokens.size()));
  }

  std::vector<std::vector<int64_t>> new_slots;
  try {
    for (const SequenceInput& in : batch) {
      const size_t n = in.tokens.size();
      const size_t shared = in.shareable < 0 ? n : std::min<size_t>(n, static_cast<size_t>(in.shareable));
      if (shared == n) {
        new_slots.push_back(cache.extend(in.sequence, in.tokens, is_chain(in)));
        continue;
      }
      new_slots.push_back(cache.extend(in.sequence, {in.tokens.begin(), in.tokens.begin() + shared}, is_chain(in)));
      const std::vector<int64_t> rest = cache.extend(in.sequence, {in.tokens.begin() + shared, in.tokens.end()}, false);
      new_slots.back().insert(new_slots.back().end(), rest.begin(), rest.end());
    }
  } catch (...) {
    for (size_t b = 0; b < new_slots.size(); ++b) cache.truncate(batch[b].sequence, plan.cached[b]);
    throw;
  }

  plan.block_size = cache.block_size();
  plan.first_row.push_back(0);
  for (int64_t b = 0; b < plan.batch; ++b) {
    const SequenceInput& in = batch[b];
    const int64_t n = static_cast<int64_t>(in.tokens.size()), first = plan.rows;
    for (int64_t i = 0; i < n; ++i) {
      const int64_t parent = in.parents.empty() ? i - 1 : in.parents[i];
      plan.tokens.push_back(in.tokens[i]);
      plan.positions.push_back(plan.cached[b] + depths[b][i]);
      plan.write_slots.push_back(new_slots[b][i]);
      plan.sequence.push_back(b);
      plan.parent_rows.push_back(parent < 0 ? -1 : first + parent);
    }
    const int64_t from = which == LogitsFor::kLast ? n - 1 : which == LogitsFor::kTail ? in.logits_from : 0;
    for (int64_t i = from; i < n; ++i) plan.logit_rows.push_back(first + i);
    plan.rows += n;
    plan.first_row.push_back(plan.rows);
    plan.blocks.push_back(cache.block_table(in.sequence));
  }
  return plan;
}

std::vector<int64_t> padded_rows(const ForwardPlan& plan) {
  std::vector<int64_t> rows(plan.rows);
  for (int64_t r = 0; r < plan.rows; ++r) {
    const int64_t b = plan.sequence[r];
    rows[r] = b * plan.seq + r - plan.first_row[b];
  }
  return rows;
}

}  // namespace seed::models
