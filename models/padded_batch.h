// PaddedBatch: a forward's index data in the layout the ATen layers read,
// B sequences of S rows each attending to T key positions each, built on
// the host as one int64 tensor so that one copy moves it to the device (or
// into a CUDA graph's static input, forward_graphs.h). Everything the
// device computes from it (the attention mask included) is a function of
// that tensor alone, so a captured forward replays for any batch of the
// same (B, S, T, L).
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

#include "models/forward_plan.h"

namespace seed::models {

struct PaddedBatch {
  // The parts, as views of a tensor holding `data` (on any device).
  struct Parts {
    at::Tensor tokens;       // [B*S] row b*S + i: token i of sequence b (past its tokens: 0)
    at::Tensor positions;    // [B*S] its RoPE position (padding rows: the sequence's cached length)
    at::Tensor write_slots;  // [B*S] the cache slot its K/V go to (padding rows: the trash slot)
    at::Tensor key_slots;    // [B*T] slot of each sequence's positions 0..T-1 (past its length: trash)
    at::Tensor cached;       // [B] tokens each sequence had in the cache before this forward
    at::Tensor logit_rows;   // [L] rows of [B*S] whose outputs are returned, in the plan's order
    at::Tensor tree;         // [B, S, S] 1 where new row i attends to new position j (itself, its ancestors)
  };

  int64_t batch = 0, seq = 0, keys = 0, outputs = 0;  // B, S, T, L
  at::Tensor data;                                    // int64, CPU: the parts one after another

  Parts parts(const at::Tensor& copy_of_data) const;
};

// The shape a plan is padded to: B sequences (the plan's, then empty ones)
// of S rows, T key positions each; with `every_row` the outputs are all
// B*S rows (a CUDA graph's, whatever rows the plan wants), else the plan's
// logit rows.
struct PaddedShape {
  int64_t batch = 0, seq = 0, keys = 0;
  bool every_row = false;
};

// The fewest key positions a padded batch of `plan` needs: every
// sequence's cached tokens plus S.
int64_t keys_needed(const ForwardPlan& plan);

// The plan's own shape: its B and S, keys_needed, its logit rows.
PaddedShape exact_shape(const ForwardPlan& plan);

// `plan` padded to `shape`. REQUIRES shape.batch >= plan.batch, shape.seq
// >= plan.seq, shape.keys >= the keys needed at shape.seq rows.
PaddedBatch pad_batch(const ForwardPlan& plan, const PaddedShape& shape);

// The rows of a padded batch of `seq` rows a sequence holding the plan's
// logit rows, in the plan's order (to pick them from every_row outputs).
std::vector<int64_t> padded_logit_rows(const ForwardPlan& plan, int64_t seq);

// Which keys each row may attend to, [B, 1, S, T] bool on the parts'
// device: a sequence's cached positions, and the new positions its tree
// allows.
at::Tensor attention_allowed(const PaddedBatch::Parts& parts, int64_t batch, int64_t seq, int64_t keys);

}  // namespace seed::models
