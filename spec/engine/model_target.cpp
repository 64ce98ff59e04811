#include "spec/engine/model_target.h"

#include <cstdint>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <exception>
#include <numeric>

#include "models/base/error.h"
#include "spec/engine/logit_summary.h"

namespace seed::spec {
namespace {

// A vocabulary from which a walk over host rows (a race or sum over every
// token of each context it reaches) costs more than handing it to another
// thread: real vocabularies, not the test models'.
constexpr int64_t kWalksApartVocab = 4096;

// Every request's walk, side by side on the calling thread's OpenMP team
// where `apart`. A failing walk throws what walking in turn would throw
// first: the earliest request's error.
std::vector<Walk> walk_all(const std::vector<VerifyRequest>& requests, bool apart) {
  const auto n = static_cast<int64_t>(requests.size());
  std::vector<Walk> walks(requests.size());
  std::vector<std::exception_ptr> errors(requests.size());
#pragma omp parallel for schedule(dynamic, 1) if (apart && n > 1)
  for (int64_t b = 0; b < n; ++b) {
    try {
      walks[static_cast<size_t>(b)] = walk(requests[static_cast<size_t>(b)]);
    } catch (...) {
      errors[static_cast<size_t>(b)] = std::current_exception();
    }
  }
  for (const std::exception_ptr& error : errors) {
    if (error) std::rethrow_exception(error);
  }
  return walks;
}

}  // namespace

ModelTarget::ModelTarget(std::shared_ptr<models::CausalLM> model, models::KvCacheOptions cache_options,
                         int distribution_top_k, LogitReads logit_reads)
    : model_(std::move(model)),
      graph_warm_ups_before_(model_->graph_warm_ups()),
      cache_(model_->make_cache(cache_options)),
      distribution_top_k_(distribution_top_k),
      logit_reads_(logit_reads) {}

ModelTarget::~ModelTarget() = default;

int64_t ModelTarget::vocab_size() const { return model_->config().vocab_size; }

int64_t ModelTarget::max_positions() const { return model_->config().max_position_embeddings; }

const ModelTarget::Slot& ModelTarget::slot_state(uint64_t slot) const {
  const auto it = slots_.find(slot);
  SEED_CHECK(it != slots_.end(), kInvalidArgument) << "target: slot " << slot << " was not started";
  return it->second;
}

void ModelTarget::start(uint64_t slot, const std::vector<int32_t>& prompt, const TargetSettings& settings) {
  SEED_CHECK(!prompt.empty(), kInvalidArgument) << "target: slot " << slot << " started with an empty prompt";
  finish(slot);
  Slot s;
  s.settings = settings;
  s.prompt = prompt;
  s.pending = prompt;
  slots_.emplace(slot, std::move(s));
  stats_.prompt_tokens += static_cast<int64_t>(prompt.size());
}

int64_t ModelTarget::room(uint64_t slot) const {
  const Slot& s = slot_state(slot);
  // The forward puts the pending tokens at positions length .. length + P - 1
  // and draft depth d at length + P - 1 + d.
  const int64_t free = max_positions() - s.length - static_cast<int64_t>(s.pending.size());
  return free < 0 ? -1 : free;
}

void ModelTarget::start_sequence(Slot& s) {
  if (s.started) cache_.release(s.sequence);
  const models::CachedStart start = cache_.create_with_prefix(s.prompt);
  s.sequence = start.sequence;
  s.started = true;
  s.length = start.cached;
  s.pending.assign(s.prompt.begin() + start.cached, s.prompt.end());
}

void ModelTarget::take_prompt_head(Slot& s, std::vector<models::SequenceInput>& batch) {
  if (s.pending.size() < 2) return;
  models::SequenceInput input{s.sequence, {s.pending.begin(), s.pending.end() - 1}, {}};
  stats_.computed_tokens += static_cast<int64_t>(input.tokens.size());
  s.length += static_cast<int64_t>(input.tokens.size());
  s.pending.erase(s.pending.begin(), s.pending.end() - 1);
  batch.push_back(std::move(input));
}

void ModelTarget::start_sequences(const std::vector<VerifyItem>& items) {
  const int64_t block = cache_.block_size();
  std::vector<Slot*> fresh;
  for (const VerifyItem& item : items) {
    Slot& s = slots_.at(item.slot);
    if (s.started) continue;
    start_sequence(s);
    fresh.push_back(&s);
  }
  // A fresh slot follows an earlier one when their prompts share more whole
  // blocks than the cache gave it; the leader computes its prompt (but the
  // last token, which its verification feeds) in a first forward.
  std::vector<Slot*> leaders, followers;
  std::vector<models::SequenceInput> shared;
  for (size_t i = 0; i < fresh.size(); ++i) {
    Slot& s = *fresh[i];
    for (size_t j = 0; j < i; ++j) {
      if (std::find(followers.begin(), followers.end(), fresh[j]) != followers.end()) continue;
      const Slot& earlier = *fresh[j];
      const auto mismatch = std::mismatch(s.prompt.begin(), s.prompt.end(), earlier.prompt.begin(), earlier.prompt.end());
      const int64_t common = std::min<int64_t>({mismatch.first - s.prompt.begin(),
                                                static_cast<int64_t>(s.prompt.size()) - 1,
                                                static_cast<int64_t>(earlier.prompt.size()) - 1});
      if (common / block * block <= s.length) continue;
      followers.push_back(&s);
      if (std::find(leaders.begin(), leaders.end(), fresh[j]) == leaders.end()) leaders.push_back(fresh[j]);
      break;
    }
  }
  for (Slot* leader : leaders) take_prompt_head(*leader, shared);
  if (shared.empty()) return;
  model_->forward(shared, cache_, models::LogitsFor::kLast);
  for (Slot* follower : followers) start_sequence(*follower);
}

void ModelTarget::prefill(const std::vector<uint64_t>& slots) {
  const DraftTree none;
  std::vector<VerifyItem> items;
  for (const uint64_t slot : slots) {
    if (!slot_state(slot).started) items.push_back({slot, &none});
  }
  start_sequences(items);
  std::vector<models::SequenceInput> batch;
  for (const VerifyItem& item : items) take_prompt_head(slots_.at(item.slot), batch);
  if (!batch.empty()) model_->forward(batch, cache_, models::LogitsFor::kLast);
}

std::vector<Verdict> ModelTarget::verify(const std::vector<VerifyItem>& items) {
  const int64_t vocab = vocab_size();
  for (const VerifyItem& item : items) {
    SEED_CHECK(item.draft != nullptr, kInvalidArgument) << "target: slot " << item.slot << " has no draft";
    slot_state(item.slot);
  }
  start_sequences(items);
  std::vector<models::SequenceInput> batch;
  std::vector<int64_t> bases, rows;  // per item: cache length before, first logits row
  int64_t next_row = 0;
  for (const VerifyItem& item : items) {
    Slot& s = slots_.at(item.slot);
    const DraftTree& draft = *item.draft;
    const int32_t pending = static_cast<int32_t>(s.pending.size());
    models::SequenceInput input{s.sequence, s.pending, {}, pending - 1};
    input.tokens.insert(input.tokens.end(), draft.tokens.begin(), draft.tokens.end());
    if (!draft.tokens.empty()) {
      input.parents.resize(pending);
      std::iota(input.parents.begin(), input.parents.end(), -1);
      for (int32_t parent : draft.parents) input.parents.push_back(parent < 0 ? pending - 1 : pending + parent);
    }
    if (!s.prefilled) stats_.computed_tokens += pending;
    bases.push_back(s.length);
    rows.push_back(next_row);
    next_row += static_cast<int64_t>(draft.tokens.size()) + 1;
    batch.push_back(std::move(input));
  }
  using Clock = std::chrono::steady_clock;
  const Clock::time_point forward_start = Clock::now();
  const at::Tensor logits = model_->forward(batch, cache_, models::LogitsFor::kTail);
  // Off the CPU only each row's summary comes to the host (rows follow one
  // at a time, where the verifier needs one); bringing either is the
  // forward's time.
  const bool summarise = logit_reads_ == LogitReads::kDeviceSummary || !logits.device().is_cpu();
  std::vector<LogitSummary> summaries;
  at::Tensor host_logits;
  if (summarise) {
    std::vector<SummaryItem> summary_items;
    for (size_t b = 0; b < items.size(); ++b) {
      summary_items.push_back(
          {rows[b], items[b].draft, slots_.at(items[b].slot).settings.sampling, distribution_top_k_});
    }
    summaries = summarize_logits(logits, summary_items);
  } else {
    host_logits = logits.contiguous();
  }
  stats_.forward_s += std::chrono::duration<double>(Clock::now() - forward_start).count();
  stats_.verify_rounds += 1;

  // Every item walked, then every last token of a walk that draws one (a
  // draft drawn from q) drawn in one batch. Summarised, the matching rule's
  // tokens are drawn first, in one batch where the logits are.
  const Clock::time_point verify_start = Clock::now();
  std::vector<TargetRows> targets;
  std::vector<VerifyRequest> requests;
  targets.reserve(items.size());
  for (size_t b = 0; b < items.size(); ++b) {
    const Slot& s = slots_.at(items[b].slot);
    const DraftTree& draft = *items[b].draft;
    const int64_t contexts = static_cast<int64_t>(draft.tokens.size()) + 1;
    // Context 0 is after the last pending token; context i + 1 after node i.
    targets.push_back(summarise ? TargetRows(std::move(summaries[b]), vocab, s.settings.sampling)
                                : TargetRows(host_logits.data_ptr<float>() + rows[b] * vocab, contexts, vocab,
                                             s.settings.sampling));
    const uint32_t base_position = static_cast<uint32_t>(bases[b] + static_cast<int64_t>(s.pending.size()));
    requests.push_back(VerifyRequest{&draft, &targets.back(), s.settings.seed, s.settings.stream, base_position});
  }
  if (summarise) draw_target_tokens(requests);
  std::vector<Walk> walks = walk_all(requests, !summarise && vocab >= kWalksApartVocab);
  std::vector<TargetRows*> drawing;
  std::vector<const FinalDraw*> draws;
  for (size_t b = 0; b < items.size(); ++b) {
    if (!walks[b].draw) continue;
    drawing.push_back(&targets[b]);
    draws.push_back(&*walks[b].draw);
  }
  const std::vector<int32_t> drawn = draw_final_tokens(drawing, draws);
  std::vector<Verdict> verdicts;
  size_t next_drawn = 0;
  for (size_t b = 0; b < items.size(); ++b) {
    const int32_t last = walks[b].draw ? drawn[next_drawn++] : walks[b].bonus;
    Verdict& verdict = verdicts.emplace_back(verdict_of(*items[b].draft, std::move(walks[b]), last));
    if (distribution_top_k_ > 0) {
      verdict.target_top.push_back(targets[b].top(0, distribution_top_k_));
      for (int32_t node : verdict.accepted) verdict.target_top.push_back(targets[b].top(node + 1, distribution_top_k_));
    }
  }
  stats_.host_verify_s += std::chrono::duration<double>(Clock::now() - verify_start).count();

  for (size_t b = 0; b < items.size(); ++b) {
    Slot& s = slots_.at(items[b].slot);
    const DraftTree& draft = *items[b].draft;
    const int64_t pending = static_cast<int64_t>(s.pending.size());
    Verdict& verdict = verdicts[b];
    if (!draft.tokens.empty()) {
      // Keep the pending chain and the accepted path; drop the other nodes.
      std::vector<int32_t> path(static_cast<size_t>(pending));
      std::iota(path.begin(), path.end(), 0);
      for (int32_t node : verdict.accepted) path.push_back(static_cast<int32_t>(pending) + node);
      cache_.commit_path(s.sequence, bases[b], path);
    }
    s.length = cache_.length(s.sequence);
    if (cache_.hidden_layer() >= 0) {
      verdict.hidden_from = s.hidden_sent;
      verdict.hidden = hidden_states(s.sequence, s.hidden_sent, s.length);
      s.hidden_sent = s.length;
    }
    s.pending.assign(1, verdict.bonus);
    if (!s.prefilled) {
      s.prefilled = true;
      s.prompt = {};
    }
  }
  return verdicts;
}

std::vector<float> ModelTarget::hidden_states(models::SequenceId sequence, int64_t from, int64_t to) const {
  std::vector<int64_t> slots;
  cache_.append_slots(sequence, slots);
  const at::Tensor index = torch::tensor(std::vector<int64_t>(slots.begin() + from, slots.begin() + to));
  const at::Tensor rows =
      cache_.hidden_states().index_select(0, index.to(cache_.hidden_states().device())).to(torch::kCPU, torch::kFloat).contiguous();
  return {rows.data_ptr<float>(), rows.data_ptr<float>() + rows.numel()};
}

void ModelTarget::finish(uint64_t slot) {
  const auto it = slots_.find(slot);
  if (it == slots_.end()) return;
  if (it->second.started) cache_.release(it->second.sequence);
  slots_.erase(it);
}

PrefillStats ModelTarget::prefill_stats() const {
  PrefillStats stats = stats_;
  const models::KvCacheStats cache = cache_.stats();
  stats.kv_peak_bytes = cache.peak_bytes;
  stats.kv_live_bytes = cache_.bytes_in_use();
  stats.evicted_blocks = cache.evicted_blocks;
  stats.graph_warm_ups = model_->graph_warm_ups() - graph_warm_ups_before_;
  return stats;
}

int64_t ModelTarget::kv_token_capacity() const { return cache_.max_tokens(); }

}  // namespace seed::spec
