#include "spec/drafters/model/edd_drafter.h"

#include <cstdint>
#include <torch/torch.h>

#include <algorithm>

#include "models/base/error.h"
#include "spec/drafters/model/model_drafter.h"

namespace seed::spec {
namespace {

// What the drafter keeps per slot.
struct EddSlot : ModelSlot {
  explicit EddSlot(const std::vector<int32_t>& prompt) : tokens(prompt) {}
  std::vector<int32_t> tokens;  // accepted tokens; the last is the bonus
  // Hidden states received and not yet in the cache: positions
  // [unfed_from, unfed_from + rows).
  std::vector<float> unfed;
  int64_t unfed_from = 0;
  bool blind = false;       // some positions' hidden states never came
  int64_t hidden_rows = 0;  // positions [0, hidden_rows) of `main` hold hidden-state K/V
};

class EddDrafter : public ModelDrafter<EddSlot> {
 public:
  EddDrafter(std::shared_ptr<const models::CausalLM> model, models::KvCacheOptions cache_options, DraftTruncation cut,
             LogitReads reads)
      : ModelDrafter("EDD drafter", std::move(model), cache_options, cut, reads) {
    SEED_CHECK(model_->config().is_edd(), kInvalidArgument) << "EDD drafter: the model's config names no target layer";
  }

  void advance(uint64_t slot, const Verdict& verdict) override;

 private:
  std::vector<DraftTree> draft_side_by_side(const std::vector<DraftAsk>& asks) override;
  // How deep the slot's next draft goes (0: none, as before the target has
  // seen its prompt).
  int depth_of(uint64_t slot, const EddSlot& s, int max_depth) const;
  // What the slot's cache lacks before its draft: the hidden states it was
  // sent, then the bonus token, its cache sequence started first (slots
  // whose prompts share blocks share their hidden-state K/V). The input
  // reads `s.unfed` in place.
  models::SequenceInput unfed_input(EddSlot& s);
};

int EddDrafter::depth_of(uint64_t slot, const EddSlot& s, int max_depth) const {
  const int64_t hidden = model_->config().hidden_size;
  const int64_t bonus = static_cast<int64_t>(s.tokens.size()) - 1;  // the bonus token's position
  const int64_t known = s.unfed_from + static_cast<int64_t>(s.unfed.size()) / hidden;
  // Until the target has seen the prompt there is nothing to read.
  if (known == 0 || s.blind) return 0;
  SEED_CHECK(known == bonus, kInternal) << "EDD drafter: slot " << slot << " has hidden states of " << known
                                        << " positions for " << bonus << " accepted tokens before its bonus";
  // As a draft model's: depth D puts the last fed node at bonus + D - 1.
  const int64_t fits = model_->config().max_position_embeddings - bonus;
  return static_cast<int>(std::min<int64_t>({max_depth, int64_t(s.settings.k_config.size()), fits}));
}

models::SequenceInput EddDrafter::unfed_input(EddSlot& s) {
  if (!s.started) {
    const models::CachedStart start = cache_.create_with_prefix(s.tokens);
    s.main = start.sequence;
    s.started = true;
    s.hidden_rows = start.cached;
  }
  const int64_t hidden = model_->config().hidden_size;
  const int64_t bonus = static_cast<int64_t>(s.tokens.size()) - 1;
  const int64_t skip = s.hidden_rows - s.unfed_from;
  const int64_t rows = bonus - s.hidden_rows;
  models::SequenceInput input{s.main, {s.tokens.begin() + s.hidden_rows, s.tokens.end()}, {}};
  input.soft_prompt = torch::from_blob(s.unfed.data() + skip * hidden, {rows, hidden}, torch::kFloat)
                          .to(model_->tensor_options());
  input.shareable = static_cast<int32_t>(rows);
  return input;
}

std::vector<DraftTree> EddDrafter::draft_side_by_side(const std::vector<DraftAsk>& asks) {
  const models::DeviceStream::Scope on_stream(stream_);
  std::vector<DraftTree> drafts(asks.size());
  std::vector<EddSlot*> slots;  // the asks that draft, in order
  std::vector<size_t> asked;    // their index in `asks`
  std::vector<TreeToGrow> trees;
  for (size_t i = 0; i < asks.size(); ++i) {
    EddSlot& s = released_slot(asks[i].slot);
    const int depth = depth_of(asks[i].slot, s, asks[i].max_depth);
    if (depth <= 0) continue;
    slots.push_back(&s);
    asked.push_back(i);
    trees.push_back({0, &s.settings, static_cast<int64_t>(s.tokens.size()), depth});
  }
  if (slots.empty()) return drafts;
  const at::Tensor logits = contexts(slots, [this](EddSlot& s) { return unfed_input(s); });
  for (size_t j = 0; j < slots.size(); ++j) {
    EddSlot& s = *slots[j];
    const int64_t bonus = static_cast<int64_t>(s.tokens.size()) - 1;
    s.hidden_rows = bonus;
    s.unfed.clear();
    s.unfed_from = bonus;
    trees[j].main = s.main;
  }
  std::vector<GrownDraft> grown = grow(slots, trees, logits, false);
  for (size_t j = 0; j < slots.size(); ++j) drafts[asked[j]] = std::move(grown[j].tree);
  return drafts;
}

void EddDrafter::advance(uint64_t slot, const Verdict& verdict) {
  const models::DeviceStream::Scope on_stream(stream_);
  EddSlot& s = released_slot(slot);
  // The bonus token's and the draft's rows go; their positions come back
  // as the hidden states of this verdict.
  if (s.started) cache_.truncate(s.main, s.hidden_rows);
  const int64_t hidden = model_->config().hidden_size;
  const int64_t expected_from = s.unfed_from + static_cast<int64_t>(s.unfed.size()) / hidden;
  const int64_t rows = static_cast<int64_t>(verdict.hidden.size()) / hidden;
  SEED_CHECK(!verdict.hidden.empty() && verdict.hidden.size() % hidden == 0, kInvalidArgument)
      << "EDD drafter: slot " << slot << ": the verdict carries " << verdict.hidden.size()
      << " hidden-state values, not rows of " << hidden << "; the target must keep the hidden states of its layer "
      << model_->config().edd_target_layer;
  s.tokens.insert(s.tokens.end(), verdict.tokens.begin(), verdict.tokens.end());
  SEED_CHECK(verdict.hidden_from + rows == static_cast<int64_t>(s.tokens.size()) - 1, kInvalidArgument)
      << "EDD drafter: slot " << slot << ": the verdict's hidden states end at position "
      << verdict.hidden_from + rows << ", the slot's bonus token is at " << s.tokens.size() - 1;
  // A slot that came here mid-stream (its drafter died) never gets the
  // earlier positions: it drafts nothing and the target decodes it alone.
  s.blind = s.blind || verdict.hidden_from != expected_from;
  if (!s.blind) s.unfed.insert(s.unfed.end(), verdict.hidden.begin(), verdict.hidden.end());
}

}  // namespace

std::unique_ptr<Drafter> make_edd_drafter(std::shared_ptr<const models::CausalLM> model,
                                          models::KvCacheOptions cache_options, DraftTruncation cut,
                                          LogitReads reads) {
  return std::make_unique<EddDrafter>(std::move(model), cache_options, cut, reads);
}

}  // namespace seed::spec
