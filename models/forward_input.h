// What one CausalLM::forward() call is given: the new tokens each sequence
// of the batch contributes (SequenceInput) and which of their logits come
// back (LogitsFor). Plain values; the caller owns them for the call.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

#include "models/kv_cache.h"

namespace seed::models {

// The new tokens one sequence contributes to a batched forward.
struct SequenceInput {
  SequenceId sequence = 0;      // cache sequence the tokens extend
  std::vector<int32_t> tokens;  // new tokens, at least one
  // Empty: a chain (token i follows token i-1). Otherwise a token tree in
  // topological order: parents[i] is -1 (a child of the cached prefix) or an
  // index < i. Node i sits at RoPE position length + depth(i) and attends to
  // the cached prefix and to its ancestors; its logits equal those of running
  // its root-to-node path alone.
  std::vector<int32_t> parents;
  // LogitsFor::kTail: the first new token whose logits are returned.
  int32_t logits_from = 0;
  // [n, hidden_size], n <= tokens: input vectors of the first n tokens in
  // place of their embeddings (an EDD's soft prompt: a target's hidden
  // states). The tokens still name the positions in the cache.
  at::Tensor soft_prompt = {};
  // How many of the new tokens, from the first, the cache may offer other
  // sequences once written; -1: all. An EDD shares only its soft-prompt
  // rows: its token rows' K/V are not a function of the tokens alone (the
  // same tokens give other K/V as hidden-state rows).
  int32_t shareable = -1;
};

// Which logits forward() returns. The LM head runs only on those rows: on a
// long prompt it would otherwise cost as much as the rest of the model.
enum class LogitsFor {
  kAll,   // [B, S_max, V]: row s of sequence b is its token s (zeros past S_b)
  kLast,  // [B, V]: the last new token of each sequence
  kTail,  // [sum of S_b - logits_from_b, V]: each sequence's tokens from its
          // logits_from on, sequences one after another
};

}  // namespace seed::models
