// What a training step minimises and an evaluation measures (private to the
// trainer, models/training/trainer.h): packed rows as a batch of inputs and
// next-token targets, masked cross-entropy optionally mixed with a
// teacher's KL, an EDD draft's logits beside its frozen target's, and the
// mean loss over held-out rows.
//
// Thread-safety: no state of their own; a model runs on one thread at a
// time.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>

#include <cstdint>
#include <functional>
#include <vector>

#include "models/causal_lm.h"
#include "models/training/train_config.h"
#include "models/training/training_data.h"

namespace seed::models {

// A batch of rows [B, row_length] as model inputs [B, T], next-token
// targets [B, T] and their loss mask [B, T] (float), on `device`.
struct Batch {
  at::Tensor inputs, targets, mask;
};

Batch make_batch(std::vector<int32_t>& tokens, std::vector<uint8_t>& mask, int64_t row_length,
                 const c10::Device& device);

// Token-level negative log-likelihood of the targets: [B, T].
at::Tensor token_nll(const at::Tensor& log_probs, const at::Tensor& targets);

// KL(p_t || p_s) = sum_x p_t(x) (log p_t(x) - log p_s(x)) per token: [B, T].
at::Tensor token_kl(const at::Tensor& teacher_logits, const at::Tensor& student_log_probs);

struct Losses {
  at::Tensor total, ce, kl;  // scalars; kl undefined without a teacher
};

// logits/teacher_logits [B, T, V]; the means run over learned tokens only.
Losses compute_losses(const at::Tensor& logits, const Batch& batch, const at::Tensor& teacher_logits,
                      const DistillConfig& distill);

// The EDD objective's two sets of logits for a batch: the frozen target's
// and the draft's, [B, T, V] each. The draft reads X = [H ; E(tokens)] with
// H the target's hidden states after edd_target_layer, both halves at
// positions 0..T-1, under the dual-block mask of `block` (edd_mask.h); its
// token rows give the logits.
struct EddLogits {
  at::Tensor target, draft;
};

EddLogits edd_logits(CausalLM& draft, CausalLM& target, const at::Tensor& inputs, int64_t block,
                     c10::ScalarType matmul_dtype);

// Mean per-token loss over the learned tokens of the first `max_rows` rows;
// NaN if they hold none. `token_loss(batch, index)` gives the loss of each
// token of the index-th batch, [B, T].
double evaluate(const PackedRows& rows, int64_t batch_size, int64_t max_rows, const c10::Device& device,
                const std::function<at::Tensor(const Batch&, int64_t)>& token_loss);

}  // namespace seed::models
