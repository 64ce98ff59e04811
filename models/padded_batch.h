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

// The fewest key positions a padded batch of `plan` needs: every
// sequence's cached tokens plus S.
int64_t keys_needed(const ForwardPlan& plan);

// `plan` padded to S = plan.seq rows a sequence and `keys` key positions.
// REQUIRES keys >= keys_needed(plan).
PaddedBatch pad_batch(const ForwardPlan& plan, int64_t keys);

// Which keys each row may attend to, [B, 1, S, T] bool on the parts'
// device: a sequence's cached positions, and the new positions its tree
// allows.
at::Tensor attention_allowed(const PaddedBatch::Parts& parts, int64_t batch, int64_t seq, int64_t keys);

}  // namespace seed::models
