// ForwardPlan: where the new tokens of a CausalLM::forward batch go and what
// each may attend to. Internal to models/ (plan_forward builds it; the
// ATen and the CPU layers read it).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "models/forward_input.h"
#include "models/kv_cache.h"
#include "models/model_config.h"

namespace seed::models {

// Rows are packed: sequence b's new tokens are rows first_row[b] ..
// first_row[b + 1] - 1, in the order given.
struct ForwardPlan {
  int64_t batch = 0, seq = 0, rows = 0;  // B, the most new tokens of a sequence, sum of them
  // Per packed row.
  std::vector<int64_t> tokens, positions, write_slots;
  std::vector<int64_t> sequence;     // its sequence's index in the batch
  std::vector<int64_t> parent_rows;  // the row of its parent node, or -1: it follows the cached prefix
  std::vector<int64_t> logit_rows;   // rows whose logits are returned
  // Per sequence.
  std::vector<int64_t> first_row;            // B + 1 entries
  std::vector<int64_t> cached;               // tokens in the cache before this forward
  // The block table of each sequence, new tokens included: position p at
  // slot(b, p). A copy, so that attention never sees the cache change.
  std::vector<std::vector<int32_t>> blocks;
  int64_t block_size = 1;

  int64_t slot(int64_t b, int64_t position) const {
    return blocks[b][position / block_size] * block_size + position % block_size;
  }

  // The positions of new tokens row `row` attends to, ascending: itself and
  // its ancestors (for a chain, every new token up to it). Every row also
  // attends to its sequence's cached positions [0, cached[b]).
  void attended_new_positions(int64_t row, std::vector<int64_t>& out) const;
};

inline void ForwardPlan::attended_new_positions(int64_t row, std::vector<int64_t>& out) const {
  const int64_t b = sequence[row];
  out.clear();
  for (int64_t r = row; r >= 0; r = parent_rows[r]) out.push_back(cached[b] + r - first_row[b]);
  std::reverse(out.begin(), out.end());
}

// Validates a forward's batch, reserves its cache slots (undoing every
// reservation if one fails: cache full) and lays out its rows.
ForwardPlan plan_forward(const ModelConfig& config, const std::vector<SequenceInput>& batch, KvCache& cache,
                         LogitsFor which);

// Each packed row's row in the padded [B * S_max] layout.
std::vector<int64_t> padded_rows(const ForwardPlan& plan);

}  // namespace seed::models
