#include "spec/model_target.h"

#include <torch/torch.h>

#include <numeric>

#include "models/base/error.h"

namespace seed::spec {

ModelTarget::ModelTarget(std::shared_ptr<models::CausalLM> model, int distribution_top_k)
    : model_(std::move(model)), cache_(model_->make_cache()), distribution_top_k_(distribution_top_k) {}

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
  slots_.emplace(slot, Slot{cache_.create(), settings, prompt});
}

int64_t ModelTarget::room(uint64_t slot) const {
  const Slot& s = slot_state(slot);
  // The forward puts the pending tokens at positions length .. length + P - 1
  // and draft depth d at length + P - 1 + d.
  const int64_t free = max_positions() - cache_.length(s.sequence) - static_cast<int64_t>(s.pending.size());
  return free < 0 ? -1 : free;
}

std::vector<Verdict> ModelTarget::verify(const std::vector<VerifyItem>& items) {
  const int64_t vocab = vocab_size();
  std::vector<models::SequenceInput> batch;
  std::vector<int64_t> bases;
  for (const VerifyItem& item : items) {
    SEED_CHECK(item.draft != nullptr, kInvalidArgument) << "target: slot " << item.slot << " has no draft";
    const Slot& s = slot_state(item.slot);
    const DraftTree& draft = *item.draft;
    const int32_t pending = static_cast<int32_t>(s.pending.size());
    models::SequenceInput input{s.sequence, s.pending, {}};
    input.tokens.insert(input.tokens.end(), draft.tokens.begin(), draft.tokens.end());
    if (!draft.tokens.empty()) {
      input.parents.resize(pending);
      std::iota(input.parents.begin(), input.parents.end(), -1);
      for (int32_t parent : draft.parents) input.parents.push_back(parent < 0 ? pending - 1 : pending + parent);
    }
    bases.push_back(cache_.length(s.sequence));
    batch.push_back(std::move(input));
  }
  const at::Tensor logits = model_->forward(batch, cache_, models::LogitsFor::kAll).to(torch::kCPU).contiguous();

  std::vector<Verdict> verdicts;
  std::vector<float> p;
  for (size_t b = 0; b < items.size(); ++b) {
    Slot& s = slots_.at(items[b].slot);
    const DraftTree& draft = *items[b].draft;
    const int64_t pending = static_cast<int64_t>(s.pending.size());
    const int64_t contexts = static_cast<int64_t>(draft.tokens.size()) + 1;
    // Context 0 is after the last pending token; context i + 1 after node i.
    const float* rows = logits[static_cast<int64_t>(b)].data_ptr<float>() + (pending - 1) * vocab;
    p.resize(static_cast<size_t>(contexts * vocab));
    for (int64_t c = 0; c < contexts; ++c) {
      sampling_distribution(rows + c * vocab, vocab, s.settings.sampling, p.data() + c * vocab);
    }
    const uint32_t base_position = static_cast<uint32_t>(bases[b] + pending);
    Verdict verdict = spec::verify(VerifyRequest{&draft, p.data(), vocab, s.settings.sampling, s.settings.seed,
                                                 s.settings.stream, base_position});
    if (!draft.tokens.empty()) {
      // Keep the pending chain and the accepted path; drop the other nodes.
      std::vector<int32_t> path(static_cast<size_t>(pending));
      std::iota(path.begin(), path.end(), 0);
      for (int32_t node : verdict.accepted) path.push_back(static_cast<int32_t>(pending) + node);
      cache_.commit_path(s.sequence, bases[b], path);
    }
    s.pending.assign(1, verdict.bonus);
    if (distribution_top_k_ > 0) {
      verdict.target_top.push_back(top_entries(p.data(), vocab, distribution_top_k_));
      for (int32_t node : verdict.accepted) {
        verdict.target_top.push_back(top_entries(p.data() + (node + 1) * vocab, vocab, distribution_top_k_));
      }
    }
    verdicts.push_back(std::move(verdict));
  }
  return verdicts;
}

void ModelTarget::finish(uint64_t slot) {
  const auto it = slots_.find(slot);
  if (it == slots_.end()) return;
  cache_.release(it->second.sequence);
  slots_.erase(it);
}

}  // namespace seed::spec
