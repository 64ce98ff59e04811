#include "models/training/train_objective.h"

#include <torch/torch.h>

#include <algorithm>
#include <limits>

#include "models/training/edd_mask.h"

namespace seed::models {

Batch make_batch(std::vector<int32_t>& tokens, std::vector<uint8_t>& mask, int64_t row_length,
                 const torch::Device& device) {
  const int64_t rows = static_cast<int64_t>(tokens.size()) / row_length, T = row_length - 1;
  const at::Tensor t = torch::from_blob(tokens.data(), {rows, row_length}, torch::kInt).to(torch::kLong);
  const at::Tensor m = torch::from_blob(mask.data(), {rows, row_length}, torch::kUInt8).to(torch::kFloat);
  return {t.narrow(1, 0, T).contiguous().to(device), t.narrow(1, 1, T).contiguous().to(device),
          m.narrow(1, 1, T).contiguous().to(device)};
}

at::Tensor token_nll(const at::Tensor& log_probs, const at::Tensor& targets) {
  return -log_probs.gather(-1, targets.unsqueeze(-1)).squeeze(-1);
}

at::Tensor token_kl(const at::Tensor& teacher_logits, const at::Tensor& student_log_probs) {
  const at::Tensor teacher = torch::log_softmax(teacher_logits, -1);
  return (teacher.exp() * (teacher - student_log_probs)).sum(-1);
}

Losses compute_losses(const at::Tensor& logits, const Batch& batch, const at::Tensor& teacher_logits,
                      const DistillConfig& distill) {
  const at::Tensor count = batch.mask.sum().clamp_min(1.0);
  const at::Tensor log_probs = torch::log_softmax(logits, -1);
  Losses out;
  out.ce = (token_nll(log_probs, batch.targets) * batch.mask).sum() / count;
  if (!teacher_logits.defined()) {
    out.total = out.ce;
    return out;
  }
  const double temperature = distill.temperature;
  const at::Tensor student = temperature == 1.0 ? log_probs : torch::log_softmax(logits / temperature, -1);
  out.kl = (token_kl(teacher_logits / temperature, student) * batch.mask).sum() / count;
  out.total = (1 - distill.alpha) * out.ce + distill.alpha * temperature * temperature * out.kl;
  return out;
}

EddLogits edd_logits(CausalLM& draft, CausalLM& target, const at::Tensor& inputs, int64_t block,
                     c10::ScalarType matmul_dtype) {
  const int64_t T = inputs.size(1);
  EddLogits out;
  at::Tensor hidden;
  {
    torch::NoGradGuard no_grad;
    out.target = target.forward_full(inputs, matmul_dtype, draft.config().edd_target_layer, &hidden);
  }
  const at::Tensor x = torch::cat({hidden, draft.embed_rows(inputs)}, 1);  // [B, 2T, hidden]
  const at::Tensor positions = torch::arange(T, torch::kLong).repeat({2});
  out.draft = draft.forward_inputs(x, positions, edd_block_mask(T, block), T, matmul_dtype);
  return out;
}

double evaluate(const PackedRows& rows, int64_t batch_size, int64_t max_rows, const torch::Device& device,
                const std::function<at::Tensor(const Batch&, int64_t)>& token_loss) {
  torch::NoGradGuard no_grad;
  const int64_t n = std::min(rows.rows(), max_rows), L = rows.row_length;
  double loss_sum = 0, count = 0;
  for (int64_t begin = 0; begin < n; begin += batch_size) {
    const int64_t size = std::min(batch_size, n - begin);
    std::vector<int32_t> tokens(rows.tokens.begin() + begin * L, rows.tokens.begin() + (begin + size) * L);
    std::vector<uint8_t> mask(rows.loss_mask.begin() + begin * L, rows.loss_mask.begin() + (begin + size) * L);
    const Batch batch = make_batch(tokens, mask, L, device);
    loss_sum += (token_loss(batch, begin / batch_size) * batch.mask).sum().item<double>();
    count += batch.mask.sum().item<double>();
  }
  return count > 0 ? loss_sum / count : std::numeric_limits<double>::quiet_NaN();
}

}  // namespace seed::models
