#include "spec/engine/logit_summary.h"

#include <cstring>

#include "models/base/error.h"

namespace seed::spec {

std::vector<LogitSummary> summarize_logits(const at::Tensor& logits, const std::vector<SummaryItem>& items) {
  SEED_CHECK(logits.dim() == 2 && logits.scalar_type() == torch::kFloat, kInternal)
      << "summarize_logits: logits must be [rows x vocab] float32, got " << logits.sizes() << " "
      << logits.scalar_type();
  torch::NoGradGuard no_grad;
  const int64_t rows = logits.size(0), vocab = logits.size(1);
  const auto on_host = [](const auto& values, torch::Dtype dtype) {
    return torch::tensor(values, torch::TensorOptions().dtype(dtype));
  };

  // Per row, the temperature its scale is wanted at (0: no scale); per
  // drafted node of those rows, its row and token. Greedy acceptance reads
  // the argmax only, and top-k/top-p rows are copied whole.
  std::vector<float> temperatures(static_cast<size_t>(rows), 0.0f);
  std::vector<int64_t> node_rows, node_tokens;
  bool any_scale = false;
  for (const SummaryItem& item : items) {
    const int64_t contexts = static_cast<int64_t>(item.draft->tokens.size()) + 1;
    SEED_CHECK(item.first_row >= 0 && item.first_row + contexts <= rows, kInternal)
        << "summarize_logits: rows [" << item.first_row << ", " << item.first_row + contexts << ") outside " << rows;
    const bool scaled = !needs_whole_row(item.sampling, vocab);
    if (scaled) {
      std::fill_n(temperatures.begin() + item.first_row, contexts, item.sampling.temperature);
      any_scale = true;
    }
    SEED_CHECK(item.draft->parents.size() == item.draft->tokens.size(), kInvalidArgument)
        << "draft has " << item.draft->tokens.size() << " tokens but " << item.draft->parents.size() << " parents";
    for (size_t j = 0; j < item.draft->tokens.size(); ++j) {
      // Checked here as the verifier would: the gather must stay inside the rows.
      const int32_t parent = item.draft->parents[j], token = item.draft->tokens[j];
      SEED_CHECK(parent >= -1 && parent < static_cast<int32_t>(j), kInvalidArgument)
          << "draft node " << j << " has parent " << parent << "; parents must be -1 or an earlier node";
      SEED_CHECK(token >= 0 && token < vocab, kInvalidArgument)
          << "draft node " << j << " proposes token " << token << ", outside the vocab [0, " << vocab << ")";
      if (scaled) {
        node_rows.push_back(item.first_row + parent + 1);
        node_tokens.push_back(token);
      }
    }
  }

  const at::Tensor argmax = logits.argmax(1);
  const at::Tensor max = logits.gather(1, argmax.unsqueeze(1)).squeeze(1);
  std::vector<at::Tensor> parts = {argmax.to(torch::kDouble), max.to(torch::kDouble)};
  if (any_scale) {
    // Rows without a temperature divide by 1 and are ignored.
    const at::Tensor t = on_host(temperatures, torch::kFloat).to(logits.device());
    const at::Tensor divisor = torch::where(t > 0, t, torch::ones_like(t)).unsqueeze(1);
    parts.push_back(((logits - max.unsqueeze(1)) / divisor).exp().sum(1, /*keepdim=*/false, torch::kDouble));
  }
  if (!node_rows.empty()) {
    std::vector<int64_t> rows_then_tokens = node_rows;
    rows_then_tokens.insert(rows_then_tokens.end(), node_tokens.begin(), node_tokens.end());
    const at::Tensor at_node = on_host(rows_then_tokens, torch::kLong).to(logits.device()).view({2, -1});
    parts.push_back(logits.index({at_node[0], at_node[1]}).to(torch::kDouble));
  }
  const at::Tensor packed = torch::cat(parts).to(torch::kCPU).contiguous();
  const double* argmax_of = packed.data_ptr<double>();
  const double* max_of = argmax_of + rows;
  const double* mass_of = any_scale ? max_of + rows : nullptr;
  const double* drafted_of = max_of + rows + (any_scale ? rows : 0);

  std::vector<LogitSummary> out;
  size_t node = 0;
  for (const SummaryItem& item : items) {
    LogitSummary s;
    const int64_t contexts = static_cast<int64_t>(item.draft->tokens.size()) + 1;
    for (int64_t c = 0; c < contexts; ++c) {
      const int64_t r = item.first_row + c;
      SoftmaxScale scale;
      scale.argmax = static_cast<int32_t>(argmax_of[r]);
      scale.max_logit = static_cast<float>(max_of[r]);
      if (mass_of != nullptr && temperatures[static_cast<size_t>(r)] > 0.0f) {
        scale.scale = static_cast<float>(1.0 / mass_of[r]);
      }
      s.contexts.push_back(scale);
    }
    if (!needs_whole_row(item.sampling, vocab)) {
      for (size_t j = 0; j < item.draft->tokens.size(); ++j, ++node) {
        s.drafted.push_back({item.draft->parents[j] + 1, item.draft->tokens[j], static_cast<float>(drafted_of[node])});
      }
    }
    s.copy_row = [logits, first = item.first_row, vocab](int64_t context, float* row) {
      const at::Tensor host = logits[first + context].to(torch::kCPU).contiguous();
      std::memcpy(row, host.data_ptr<float>(), static_cast<size_t>(vocab) * sizeof(float));
    };
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace seed::spec
