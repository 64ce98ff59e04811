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

PaddedShape exact_shape(const ForwardPlan& plan) { return {plan.batch, plan.seq, keys_needed(plan), false}; }

std::vector<int64_t> padded_logit_rows(const ForwardPlan& plan, int64_t seq) {
  std::vector<int64_t> rows;
  rows.reserve(plan.logit_rows.size());
  for (int64_t r : plan.logit_rows) {
    const int64_t b = plan.sequence[r];
    rows.push_back(b * seq + r - plan.first_row[b]);
  }
  return rows;
}

PaddedBatch pad_batch(const ForwardPlan& plan, const PaddedShape& shape) {
  const int64_t B = shape.batch, S = shape.seq, T = shape.keys;
  int64_t needed = 0;
  for (int64_t b = 0; b < plan.batch; ++b) needed = std::max(needed, plan.cached[b] + S);
  SEED_CHECK(B >= plan.batch && S >= plan.seq && T >= needed, kInvalidArgument)
      << "a padded batch of " << B << " x " << S << " rows and " << T << " key positions cannot hold a plan of "
      << plan.batch << " x " << plan.seq << " rows needing " << needed;
  const std::vector<int64_t> outputs = shape.every_row ? std::vector<int64_t>() : padded_logit_rows(plan, S);
  const int64_t L = shape.every_row ? B * S : static_cast<int64_t>(outputs.size());
  PaddedBatch padded;
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
    // Sequences past the plan's are empty: every row padding.
    const bool real = b < plan.batch;
    const int64_t first = real ? plan.first_row[b] : 0, n = real ? plan.first_row[b + 1] - first : 0;
    cached[b] = real ? plan.cached[b] : 0;
    for (int64_t i = 0; i < S; ++i) {
      const int64_t row = b * S + i;
      int64_t* tree_row = tree + row * S;
      if (i >= n) {  // padding: writes to the trash slot, attends to itself there
        positions[row] = cached[b];
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
    const int64_t length = cached[b] + n;
    for (int64_t p = 0; p < T; ++p) key_slots[b * T + p] = p < length ? plan.slot(b, p) : KvCache::kTrashSlot;
  }
  for (int64_t j = 0; j < L; ++j) logit_rows[j] = shape.every_row ? j : outputs[j];
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
