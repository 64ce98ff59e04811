#include "models/padded_batch.h"

#include <torch/torch.h>

#include <vector>

#include "models/base/error.h"
#include "models/kv_cache.h"

namespace seed::models {

PaddedBatch::Parts PaddedBatch::parts(const at::Tensor& d) const {
  const int64_t B = batch, S = seq, T = keys;
  int64_t at = 0;
  const auto take = [&](int64_t n) {
    at::Tensor part = d.narrow(0, at, n);
    at += n;
    return part;
  };
  Parts p;
  p.tokens = take(B * S);
  p.positions = take(B * S);
  p.write_slots = take(B * S);
  p.key_slots = take(B * T);
  p.cached = take(B);
  p.logit_rows = take(outputs);
  p.tree = take(B * S * S).view({B, S, S});
  return p;
}

int64_t keys_needed(const ForwardPlan& plan) {
  int64_t keys = 0;
  for (int64_t b = 0; b < plan.batch; ++b) keys = std::max(keys, plan.cached[b] + plan.seq);
  return keys;
}

PaddedBatch pad_batch(const ForwardPlan& plan, int64_t keys) {
  SEED_CHECK(keys >= keys_needed(plan), kInvalidArgument)
      << "a padded batch of " << keys << " key positions, but the batch needs " << keys_needed(plan);
  PaddedBatch padded;
  const int64_t B = plan.batch, S = plan.seq, T = keys;
  const int64_t L = static_cast<int64_t>(plan.logit_rows.size());
  padded.batch = B;
  padded.seq = S;
  padded.keys = T;
  padded.outputs = L;
  padded.data = torch::zeros({3 * B * S + B * T + B + L + B * S * S}, torch::kLong);
  int64_t* d = padded.data.data_ptr<int64_t>();
  int64_t* tokens = d;
  int64_t* positions = tokens + B * S;
  int64_t* write_slots = positions + B * S;
  int64_t* key_slots = write_slots + B * S;
  int64_t* cached = key_slots + B * T;
  int64_t* logit_rows = cached + B;
  int64_t* tree = logit_rows + L;
  std::vector<int64_t> attended;
  for (int64_t b = 0; b < B; ++b) {
    const int64_t first = plan.first_row[b], n = plan.first_row[b + 1] - first;
    cached[b] = plan.cached[b];
    for (int64_t i = 0; i < S; ++i) {
      const int64_t row = b * S + i;
      int64_t* tree_row = tree + row * S;
      if (i >= n) {  // padding: writes to the trash slot, attends to itself there
        positions[row] = plan.cached[b];
        write_slots[row] = KvCache::kTrashSlot;
        tree_row[i] = 1;
        continue;
      }
      tokens[row] = plan.tokens[first + i];
      positions[row] = plan.positions[first + i];
      write_slots[row] = plan.write_slots[first + i];
      plan.attended_new_positions(first + i, attended);
      for (int64_t p : attended) tree_row[p - plan.cached[b]] = 1;
    }
    const int64_t length = plan.cached[b] + n;
    for (int64_t p = 0; p < T; ++p) key_slots[b * T + p] = p < length ? plan.slot(b, p) : KvCache::kTrashSlot;
  }
  for (int64_t j = 0; j < L; ++j) {
    const int64_t r = plan.logit_rows[j], b = plan.sequence[r];
    logit_rows[j] = b * S + r - plan.first_row[b];
  }
  return padded;
}

at::Tensor attention_allowed(const PaddedBatch::Parts& parts, int64_t B, int64_t S, int64_t T) {
  const at::Tensor key = torch::arange(T, parts.cached.options()).view({1, 1, T});
  const at::Tensor relative = key - parts.cached.view({B, 1, 1});  // [B, 1, T]: key - first new position
  const at::Tensor is_new = (relative >= 0) & (relative < S);
  const at::Tensor by_tree = parts.tree.gather(2, relative.clamp(0, S - 1).expand({B, S, T})).ne(0);  // [B, S, T]
  return ((relative < 0) | (is_new & by_tree)).unsqueeze(1);
}

}  // namespace seed::models
