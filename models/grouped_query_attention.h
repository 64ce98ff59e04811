// Grouped-query attention in ATen ops over keys and values already in
// hand: a padded batch's rows over gathered keys (CausalLM's ATen layers,
// where paged_attention.h does not serve) and whole sequences (training),
// each behind an additive mask. Internal to models/; pure functions of
// their arguments.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/ScalarType.h>
#include <c10/core/TensorOptions.h>

#include <cstdint>

namespace seed::models {

// Masked positions get the dtype's lowest finite value rather than -inf, so
// that a fully masked (padding) row softmaxes to finite values instead of NaN.
float mask_value(c10::ScalarType dtype);

// Grouped-query attention of a padded batch. q [B*S, H, D] (already
// RoPE'd), k/v [B, T, Hkv, D]. Query head h reads kv head h / group, so q
// is regrouped to [B, Hkv, group*S, D] instead of repeating k and v;
// bias [B, 1, group*S, T] is 0 where attention_allowed allows a row's key
// and mask_value() where not. Returns [B*S, H*D].
at::Tensor attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& bias);

// Grouped-query attention over whole sequences (training), masked by an
// additive [1, G*T, T] mask (causal_mask(), or forward_inputs' own). q
// [B*T, H, D] (RoPE'd), k/v [B, T, Hkv, D]. One
// sequence at a time: a batch's scores [B, H, T, T] would pass glibc's
// 32 MiB mmap threshold (79 MB at B 8, T 640), and each such buffer is
// mapped, zero-filled by the kernel and unmapped again (a fifth of a
// training step). The scale and mask fold into one baddbmm. Returns
// [B*T, H*D] in q's dtype.
at::Tensor masked_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& mask);

// causal_attention's additive mask: [1, G*T, T], row g*T + i hiding the
// positions after i.
at::Tensor causal_mask(int64_t seq, int64_t group, const at::TensorOptions& options);

}  // namespace seed::models
