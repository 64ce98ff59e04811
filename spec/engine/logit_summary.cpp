#include "spec/engine/logit_summary.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <memory>
#include <utility>

#include <torch/torch.h>

#include "models/base/error.h"

namespace seed::spec {
namespace {

template <typename T>
at::Tensor on_host(const std::vector<T>& values, torch::Dtype dtype) {
  return torch::tensor(values, torch::TensorOptions().dtype(dtype));
}

// x >> shift with zeros shifted in: int64 tensors shift arithmetically.
at::Tensor shift_right(const at::Tensor& x, int64_t shift) {
  return x.__rshift__(shift).bitwise_and((int64_t{1} << (64 - shift)) - 1);
}

// Per row of `weights` [rows x vocab], race_from's winner on its row of
// `stream` [rows x 1]: token_uniform's words made with int64 arithmetic,
// which wraps as uint64's does, then the least -log(u) / weight (no
// shortcut: every token's ratio at once).
at::Tensor race_winners(const at::Tensor& weights, const at::Tensor& stream, const at::Tensor& ids) {
  constexpr auto word = [](uint64_t w) { return static_cast<int64_t>(w); };
  at::Tensor x = stream + (ids.unsqueeze(0) + 1) * word(0x9e3779b97f4a7c15ULL);
  x = x.bitwise_xor(shift_right(x, 30)) * word(0xbf58476d1ce4e5b9ULL);
  x = x.bitwise_xor(shift_right(x, 27)) * word(0x94d049bb133111ebULL);
  x = x.bitwise_xor(shift_right(x, 31));
  const at::Tensor u = (shift_right(x, 11).to(torch::kDouble) + 0.5) * (1.0 / 9007199254740992.0);
  const at::Tensor ratio = -u.log() / weights.to(torch::kDouble);
  return ratio.masked_fill_(weights <= 0.0f, std::numeric_limits<double>::infinity()).argmin(1);
}

// The rows of one verified forward, where the forward left them.
class DeviceRows : public LogitRows {
 public:
  explicit DeviceRows(at::Tensor logits) : logits_(std::move(logits)) {}

  void copy_row(int64_t row, float* out) const override {
    const at::Tensor host = logits_[row].to(torch::kCPU).contiguous();
    std::memcpy(out, host.data_ptr<float>(), static_cast<size_t>(logits_.size(1)) * sizeof(float));
  }

  std::vector<int32_t> draw(const std::vector<RowDraw>& draws) const override;

 private:
  at::Tensor logits_;
};

std::vector<int32_t> DeviceRows::draw(const std::vector<RowDraw>& draws) const {
  if (draws.empty()) return {};
  torch::NoGradGuard no_grad;
  const int64_t count = static_cast<int64_t>(draws.size()), vocab = logits_.size(1);
  // One upload: per draw its row, largest logit, temperature, scale, rest,
  // uniform, top-k/top-p cut and race stream (its two halves, -1 for none);
  // then (draw, token, value) per entry of the residuals. Every number is
  // exact in double.
  constexpr int64_t kPerDraw = 10;
  std::vector<double> packed;
  int64_t entries = 0;
  for (const RowDraw& d : draws) {
    const RowSummary& s = d.summary;
    const double stream_high = d.race ? static_cast<double>(*d.race >> 32) : -1.0;
    const double stream_low = d.race ? static_cast<double>(*d.race & 0xffffffffULL) : -1.0;
    packed.insert(packed.end(), {static_cast<double>(d.row), s.softmax.max_logit, d.temperature, s.softmax.scale,
                                 d.residual->rest, d.u, static_cast<double>(s.last_kept), s.last_kept_logit,
                                 stream_high, stream_low});
    entries += static_cast<int64_t>(d.residual->ids.size());
  }
  for (int64_t i = 0; i < count; ++i) {
    const Residual& r = *draws[static_cast<size_t>(i)].residual;
    for (size_t j = 0; j < r.ids.size(); ++j) packed.insert(packed.end(), {double(i), double(r.ids[j]), r.values[j]});
  }
  const at::Tensor all = on_host(packed, torch::kDouble).to(logits_.device());
  const at::Tensor per_draw = all.narrow(0, 0, kPerDraw * count).view({count, kPerDraw});
  const auto column = [&](int64_t c, torch::Dtype dtype) { return per_draw.select(1, c).to(dtype).unsqueeze(1); };

  // p as RowSummary defines it: exp_nonpositive is 0 below -87, and the
  // tokens top-k and top-p drop are 0.
  const at::Tensor rows = logits_.index_select(0, per_draw.select(1, 0).to(torch::kLong));
  const at::Tensor ids = torch::arange(vocab, torch::TensorOptions().dtype(torch::kLong).device(rows.device()));
  const at::Tensor z = (rows - column(1, torch::kFloat)) / column(2, torch::kFloat);
  at::Tensor p = z.exp().masked_fill_(z < -87.0f, 0.0f);
  if (std::any_of(draws.begin(), draws.end(), [](const RowDraw& d) { return d.summary.last_kept >= 0; })) {
    const at::Tensor last_kept = column(6, torch::kLong), last_kept_logit = column(7, torch::kFloat);
    const at::Tensor cut = (last_kept >= 0) & ((rows < last_kept_logit) |
                                               ((rows == last_kept_logit) & (ids.unsqueeze(0) > last_kept)));
    p.masked_fill_(cut, 0.0f);
  }
  p.mul_(column(3, torch::kFloat));
  at::Tensor r = p;
  if (std::any_of(draws.begin(), draws.end(), [](const RowDraw& d) { return d.residual->rest != 1.0; })) {
    r = (p.to(torch::kDouble) * column(4, torch::kDouble)).to(torch::kFloat);
  }
  if (entries > 0) {
    const at::Tensor e = all.narrow(0, kPerDraw * count, 3 * entries).view({entries, 3});
    r.index_put_({e.select(1, 0).to(torch::kLong), e.select(1, 1).to(torch::kLong)}, e.select(1, 2).to(torch::kFloat));
  }
  const auto races = [](const RowDraw& d) { return d.race.has_value(); };
  at::Tensor drawn;
  if (!std::all_of(draws.begin(), draws.end(), races)) {
    // sample_from: the first token whose running sum exceeds u times the
    // mass; the last token with mass where the sum ends a rounding short.
    const at::Tensor cumulative = r.to(torch::kDouble).cumsum(1);
    const at::Tensor target = cumulative.select(1, vocab - 1).unsqueeze(1) * column(5, torch::kDouble);
    const at::Tensor first = (cumulative <= target).sum(1);
    const at::Tensor last = std::get<0>(torch::where(r > 0, ids, torch::full_like(ids, -1)).max(1));
    drawn = torch::minimum(first, last);
  }
  if (std::any_of(draws.begin(), draws.end(), races)) {
    const at::Tensor stream = column(8, torch::kLong).__lshift__(32).bitwise_or(column(9, torch::kLong));
    const at::Tensor winners = race_winners(p, stream, ids);
    drawn = drawn.defined() ? torch::where(column(8, torch::kDouble).squeeze(1) >= 0.0, winners, drawn) : winners;
  }
  const at::Tensor tokens = drawn.to(torch::kCPU, torch::kInt).contiguous();

  std::vector<int32_t> out(tokens.data_ptr<int32_t>(), tokens.data_ptr<int32_t>() + count);
  for (size_t i = 0; i < out.size(); ++i) {
    SEED_CHECK(out[i] >= 0, kInternal) << "draw from row " << draws[i].row << ": the residual has no mass";
  }
  return out;
}

// For rows sampled under top-k or top-p, what they keep, as
// sampling_distribution cuts (RowSummary): per row the mass kept, the last
// token kept and its logit. params: per row its (row, temperature, top_k or
// vocab, top_p). One [3 x rows] tensor, where the logits are.
at::Tensor cut_rows(const at::Tensor& logits, const std::vector<double>& params) {
  const int64_t vocab = logits.size(1);
  const at::Tensor per_row = on_host(params, torch::kDouble).to(logits.device()).view({-1, 4});
  const auto column = [&](int64_t c, torch::Dtype dtype) { return per_row.select(1, c).to(dtype).unsqueeze(1); };
  // By descending logit, ties to the lower id (a stable sort).
  const auto [sorted, order] =
      logits.index_select(0, per_row.select(1, 0).to(torch::kLong)).sort(/*stable=*/true, 1, /*descending=*/true);
  const at::Tensor z = (sorted - sorted.narrow(1, 0, 1)) / column(1, torch::kFloat);
  const at::Tensor ranks = torch::arange(vocab, torch::TensorOptions().dtype(torch::kLong).device(logits.device()));
  const at::Tensor top_k = column(2, torch::kLong), top_p = column(3, torch::kDouble);
  const at::Tensor mass =
      z.exp().masked_fill_(z < -87.0f, 0.0f).masked_fill_(ranks >= top_k, 0.0f).to(torch::kDouble).cumsum(1);
  // The nucleus: the smallest prefix whose mass reaches top_p of what top-k
  // kept (at least one token; all that top-k kept if rounding falls short).
  const at::Tensor reach = (mass < top_p * mass.narrow(1, vocab - 1, 1)).sum(1, /*keepdim=*/true) + 1;
  const at::Tensor last = torch::where(top_p < 1.0, torch::minimum(reach, top_k), top_k) - 1;
  const at::Tensor kept_mass = mass.gather(1, last);
  const at::Tensor last_logit = sorted.gather(1, last).to(torch::kDouble);
  const at::Tensor last_id = order.gather(1, last).to(torch::kDouble);
  return torch::cat({kept_mass, last_logit, last_id}, 1).t().contiguous();
}

// Per row, the k tokens of largest logit, ties to the lower id: [2 x rows
// x k] doubles, their ids then their logits.
at::Tensor top_logits(const at::Tensor& logits, const std::vector<int64_t>& rows, int64_t k) {
  const at::Tensor ids = on_host(rows, torch::kLong).to(logits.device());
  const at::Tensor row_logits = logits.index_select(0, ids) + 0.0f;  // -0 becomes +0: equal logits tie
  // Keys in the order wanted, all distinct: the float's bits made monotone
  // (a negative float's magnitude bits flipped), then the id's complement.
  const at::Tensor bits = row_logits.view(torch::kInt);
  const at::Tensor ordered = torch::where(bits < 0, bits.bitwise_xor(0x7FFFFFFF), bits).to(torch::kLong);
  constexpr int64_t kIds = int64_t{1} << 32;
  const at::Tensor vocab_ids =
      torch::arange(logits.size(1), torch::TensorOptions().dtype(torch::kLong).device(logits.device()));
  const at::Tensor top = std::get<1>((ordered * kIds + (kIds - 1 - vocab_ids)).topk(k, 1));
  return torch::cat({top.to(torch::kDouble).view({-1}), row_logits.gather(1, top).to(torch::kDouble).view({-1})});
}

}  // namespace

std::vector<LogitSummary> summarize_logits(const at::Tensor& logits, const std::vector<SummaryItem>& items) {
  SEED_CHECK(logits.dim() == 2 && logits.scalar_type() == torch::kFloat, kInternal)
      << "summarize_logits: logits must be [rows x vocab] float32, got " << logits.sizes() << " "
      << logits.scalar_type();
  torch::NoGradGuard no_grad;
  const int64_t rows = logits.size(0), vocab = logits.size(1);

  // Per row of a sampled item, its temperature (0: greedy, no scale); per
  // row cut by top-k or top-p, its cut (cut_rows); per sampled item, the
  // (context, token) pairs acceptance reads p at: the drafted tokens and
  // q's support. Greedy acceptance reads the argmax only.
  std::vector<float> temperatures(static_cast<size_t>(rows), 0.0f);
  std::vector<double> cut_params;
  std::vector<int64_t> cut_of(static_cast<size_t>(rows), -1);  // per row, its index among the cut rows
  std::vector<std::vector<TokenLogit>> read(items.size());
  std::vector<int64_t> top_rows;  // rows of the items asking for top entries
  int64_t top = 0;                 // the most any asks for
  bool any_scale = false;
  for (size_t i = 0; i < items.size(); ++i) {
    const SummaryItem& item = items[i];
    const DraftTree& draft = *item.draft;
    const int64_t contexts = static_cast<int64_t>(draft.tokens.size()) + 1;
    SEED_CHECK(item.first_row >= 0 && item.first_row + contexts <= rows, kInternal)
        << "summarize_logits: rows [" << item.first_row << ", " << item.first_row + contexts << ") outside " << rows;
    const bool sampled = !item.sampling.greedy();
    if (sampled) {
      std::fill_n(temperatures.begin() + item.first_row, contexts, item.sampling.temperature);
      any_scale = true;
      const int64_t top_k = item.sampling.top_k > 0 ? std::min<int64_t>(item.sampling.top_k, vocab) : vocab;
      if (top_k < vocab || item.sampling.top_p < 1.0f) {
        for (int64_t r = item.first_row; r < item.first_row + contexts; ++r) {
          cut_of[static_cast<size_t>(r)] = static_cast<int64_t>(cut_params.size() / 4);
          cut_params.insert(cut_params.end(), {static_cast<double>(r), item.sampling.temperature,
                                               static_cast<double>(top_k), item.sampling.top_p});
        }
      }
    }
    if (sampled && item.top > 0) {
      for (int64_t r = item.first_row; r < item.first_row + contexts; ++r) top_rows.push_back(r);
      top = std::max(top, std::min<int64_t>(item.top, vocab));
    }
    SEED_CHECK(draft.parents.size() == draft.tokens.size(), kInvalidArgument)
        << "draft has " << draft.tokens.size() << " tokens but " << draft.parents.size() << " parents";
    // Checked here as the verifier would: the gathers must stay inside the rows.
    for (size_t j = 0; j < draft.tokens.size(); ++j) {
      const int32_t parent = draft.parents[j], token = draft.tokens[j];
      SEED_CHECK(parent >= -1 && parent < static_cast<int32_t>(j), kInvalidArgument)
          << "draft node " << j << " has parent " << parent << "; parents must be -1 or an earlier node";
      SEED_CHECK(token >= 0 && token < vocab, kInvalidArgument)
          << "draft node " << j << " proposes token " << token << ", outside the vocab [0, " << vocab << ")";
      if (sampled) read[i].push_back({parent + 1, token});
    }
    if (!sampled) continue;
    for (size_t c = 0; c < draft.q.size() && c < static_cast<size_t>(contexts); ++c) {
      for (const int32_t id : draft.q[c].ids) {
        SEED_CHECK(id >= 0 && id < vocab, kInvalidArgument)
            << "draft q row " << c << " names token " << id << ", outside the vocab [0, " << vocab << ")";
        read[i].push_back({static_cast<int64_t>(c), id});
      }
    }
    std::sort(read[i].begin(), read[i].end(), TokenLogit::before);
    const auto same = [](const TokenLogit& a, const TokenLogit& b) { return !TokenLogit::before(a, b); };
    read[i].erase(std::unique(read[i].begin(), read[i].end(), same), read[i].end());
  }
  std::vector<int64_t> read_rows, read_tokens;
  for (size_t i = 0; i < items.size(); ++i) {
    for (const TokenLogit& t : read[i]) {
      read_rows.push_back(items[i].first_row + t.context);
      read_tokens.push_back(t.token);
    }
  }

  // One copy of every number.
  const at::Tensor argmax = logits.argmax(1);
  const at::Tensor max = logits.gather(1, argmax.unsqueeze(1)).squeeze(1);
  std::vector<at::Tensor> parts = {argmax.to(torch::kDouble), max.to(torch::kDouble)};
  if (any_scale) {
    // Rows without a temperature divide by 1 and are ignored.
    const at::Tensor t = on_host(temperatures, torch::kFloat).to(logits.device());
    const at::Tensor divisor = torch::where(t > 0, t, torch::ones_like(t)).unsqueeze(1);
    parts.push_back(((logits - max.unsqueeze(1)) / divisor).exp().sum(1, /*keepdim=*/false, torch::kDouble));
  }
  if (!read_rows.empty()) {
    std::vector<int64_t> rows_then_tokens = read_rows;
    rows_then_tokens.insert(rows_then_tokens.end(), read_tokens.begin(), read_tokens.end());
    const at::Tensor at_read = on_host(rows_then_tokens, torch::kLong).to(logits.device()).view({2, -1});
    parts.push_back(logits.index({at_read[0], at_read[1]}).to(torch::kDouble));
  }
  const int64_t cuts = static_cast<int64_t>(cut_params.size() / 4);
  if (cuts > 0) parts.push_back(cut_rows(logits, cut_params).view({-1}));
  if (!top_rows.empty()) parts.push_back(top_logits(logits, top_rows, top));
  const at::Tensor packed = torch::cat(parts).to(torch::kCPU).contiguous();
  const double* argmax_of = packed.data_ptr<double>();
  const double* max_of = argmax_of + rows;
  const double* mass_of = any_scale ? max_of + rows : nullptr;
  const double* read_of = max_of + rows + (any_scale ? rows : 0);
  const double* kept_mass_of = read_of + read_rows.size();
  const double* last_kept_logit_of = kept_mass_of + cuts;
  const double* last_kept_of = last_kept_logit_of + cuts;
  const double* top_ids_of = last_kept_of + cuts;
  const double* top_logit_of = top_ids_of + top_rows.size() * static_cast<size_t>(top);

  const auto device_rows = std::make_shared<const DeviceRows>(logits);
  std::vector<LogitSummary> out;
  for (size_t i = 0; i < items.size(); ++i) {
    const SummaryItem& item = items[i];
    LogitSummary s;
    const int64_t contexts = static_cast<int64_t>(item.draft->tokens.size()) + 1;
    for (int64_t c = 0; c < contexts; ++c) {
      const size_t r = static_cast<size_t>(item.first_row + c);
      RowSummary summary;
      summary.softmax.argmax = static_cast<int32_t>(argmax_of[r]);
      summary.softmax.max_logit = static_cast<float>(max_of[r]);
      if (temperatures[r] > 0.0f) summary.softmax.scale = static_cast<float>(1.0 / mass_of[r]);
      if (const int64_t cut = cut_of[r]; cut >= 0) {
        summary.softmax.scale = static_cast<float>(1.0 / kept_mass_of[cut]);
        summary.last_kept = static_cast<int32_t>(last_kept_of[cut]);
        summary.last_kept_logit = static_cast<float>(last_kept_logit_of[cut]);
      }
      s.contexts.push_back(summary);
    }
    for (TokenLogit t : read[i]) {
      t.logit = static_cast<float>(*read_of++);
      s.token_logits.push_back(t);
    }
    if (!item.sampling.greedy() && item.top > 0) {
      s.top = static_cast<int>(top);
      for (int64_t c = 0; c < contexts; ++c) {
        for (int64_t j = 0; j < top; ++j) {
          s.top_logits.push_back({c, static_cast<int32_t>(*top_ids_of++), static_cast<float>(*top_logit_of++)});
        }
      }
    }
    s.rows = device_rows;
    s.first_row = item.first_row;
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace seed::spec
