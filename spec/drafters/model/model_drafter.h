// ModelDrafter: what the drafters over a draft model (DraftModelDrafter,
// EddDrafter) share. The model is shared by the engine's drafters (one
// copy of its packed weights; CausalLM::forward is const and thread-safe);
// each drafter owns its KV cache, its slots and a device stream of its own,
// so that drafters on their threads overlap the target and each other on
// one GPU. A slot's proposals hold cache sequences: its main one (the
// accepted tokens, from its first proposal on) and the forks its draft
// tree's other branches used; finish() releases them. A batch of
// proposals is drafted side by side (draft_side_by_side), a proposal alone
// as a batch of one.
#pragma once

#include <cstdint>
#include <exception>
#include <memory>
#include <utility>
#include <vector>

#include "models/base/error.h"
#include "models/causal_lm.h"
#include "models/device_stream.h"
#include "spec/drafters/drafter_slots.h"
#include "spec/drafters/model/draft_tree_growth.h"

namespace seed::spec {

// What every model drafter keeps per slot (its Slot derives from it, and
// is made from the slot's starting tokens): the request's settings and the
// slot's cache sequences.
struct ModelSlot {
  DraftSettings settings;
  bool started = false;  // `main` exists
  models::SequenceId main = 0;
  std::vector<models::SequenceId> forks;
};

template <typename Slot>
class ModelDrafter : public SlotDrafter<Slot> {
 public:
  DraftTree propose(uint64_t slot, int max_depth) override {
    return std::move(draft_side_by_side({{slot, max_depth}}).front());
  }
  int64_t graph_warm_ups() const override { return model_->graph_warm_ups(); }
  // The tokens a draft sampled from q leads to follow its logits' bits, so
  // it joins the batch only where a row's logits are the bits it gets alone
  // (the CPU layers); elsewhere (a GPU's kernels choose by batch size) it
  // drafts alone, so that a seed gives the same tokens whatever it was
  // batched with. Top-token drafts give the target's tokens whatever they
  // propose.
  std::vector<DraftResult> propose_batch(const std::vector<DraftAsk>& asks) override {
    std::vector<std::vector<size_t>> batches(1);
    for (size_t i = 0; i < asks.size(); ++i) {
      const Slot* s = this->slots_.find(asks[i].slot);
      const bool alone = !model_->rows_independent() && (s == nullptr || s->settings.draws_from_q());
      if (alone) {
        batches.push_back({i});
      } else {
        batches.front().push_back(i);
      }
    }
    std::vector<DraftResult> results(asks.size());
    for (const std::vector<size_t>& batch : batches) {
      if (batch.empty()) continue;
      std::vector<DraftAsk> part;
      for (const size_t i : batch) part.push_back(asks[i]);
      try {
        std::vector<DraftTree> drafts = draft_side_by_side(part);
        for (size_t j = 0; j < batch.size(); ++j) results[batch[j]].draft = std::move(drafts[j]);
      } catch (...) {
        for (const size_t i : batch) results[i].error = std::current_exception();
      }
    }
    return results;
  }
  // Starts `slot` afresh (finishing what it held). Throws kInvalidArgument
  // for what check_draft_start refuses.
  void start(uint64_t slot, const std::vector<int32_t>& tokens, const DraftSettings& settings) override {
    check_draft_start(this->slots_.drafter(), slot, tokens, settings);
    finish(slot);
    Slot s(tokens);
    s.settings = settings;
    this->slots_.start(slot, tokens, std::move(s));
  }
  void finish(uint64_t slot) override {
    const models::DeviceStream::Scope on_stream(stream_);
    Slot* s = this->slots_.find(slot);
    if (s == nullptr) return;
    release_forks(*s);
    if (s->started) cache_.release(s->main);
    this->slots_.erase(slot);
  }

 protected:
  // `name` names the drafter in errors (a literal); sampled drafts are
  // drawn from, and carry, `cut` applied to each request's sampling;
  // `reads` says where draft rows are read (grow_draft_trees). Throws
  // kInvalidArgument for a tensor-parallel shard: drafters run whole models.
  ModelDrafter(const char* name, std::shared_ptr<const models::CausalLM> model, models::KvCacheOptions cache_options,
               DraftTruncation cut, LogitReads reads)
      : SlotDrafter<Slot>(name),
        model_(std::move(model)),
        cut_(cut),
        reads_(reads),
        cache_(model_->make_cache(cache_options)),
        stream_(model_->tensor_options().device()) {
    SEED_CHECK(model_->shard().is_whole(), kInvalidArgument)
        << name << ": the draft model is tp rank " << model_->shard().rank << " of " << model_->shard().size
        << "; drafters run whole models";
  }

  // The asks' drafts, each level of all of them in one forward; what
  // throws fails them all.
  virtual std::vector<DraftTree> draft_side_by_side(const std::vector<DraftAsk>& asks) = 0;
  // The draft's logits at each slot's context (row j: slots[j]'s) in its
  // LM head's columns (CausalLM::forward_head), from
  // `unfed(slot)`: the input of what the slot's cache lacks, its cache
  // sequence started first if it has none. A slot that starts here runs
  // alone, so that one after it in the batch with the same tokens reuses
  // its prefix; the others go in one forward.
  template <typename Unfed>
  at::Tensor contexts(const std::vector<Slot*>& slots, const Unfed& unfed) {
    std::vector<at::Tensor> rows(slots.size());
    std::vector<models::SequenceInput> feed;
    std::vector<size_t> fed;
    for (size_t j = 0; j < slots.size(); ++j) {
      if (!slots[j]->started) {
        rows[j] = model_->forward_head({unfed(*slots[j])}, cache_, models::LogitsFor::kLast);
      } else {
        feed.push_back(unfed(*slots[j]));
        fed.push_back(j);
      }
    }
    if (!feed.empty()) {
      const at::Tensor batch = model_->forward_head(feed, cache_, models::LogitsFor::kLast);
      for (size_t f = 0; f < fed.size(); ++f) rows[fed[f]] = batch.narrow(0, static_cast<int64_t>(f), 1);
    }
    return at::cat(rows);
  }
  // The slot's state, the forks of its last proposal released.
  Slot& released_slot(uint64_t slot) {
    Slot& s = this->slots_.at(slot);
    release_forks(s);
    return s;
  }
  // The draft trees of `slots` grown side by side from `logits` (row i:
  // slots[i]'s context), trees[i] saying where and how deep
  // (grow_draft_trees); each slot keeps the forks it uses until they are
  // released.
  std::vector<GrownDraft> grow(const std::vector<Slot*>& slots, const std::vector<TreeToGrow>& trees,
                               const at::Tensor& logits, bool shareable) {
    std::vector<GrownDraft> grown = grow_draft_trees(*model_, cache_, trees, logits, cut_, shareable, reads_);
    for (size_t i = 0; i < slots.size(); ++i) slots[i]->forks = std::move(grown[i].forks);
    return grown;
  }

  std::shared_ptr<const models::CausalLM> model_;
  DraftTruncation cut_;  // sampled drafts are drawn from, and carry, this cut of q
  LogitReads reads_;
  models::KvCache cache_;
  models::DeviceStream stream_;

 private:
  void release_forks(ModelSlot& s) {
    for (const models::SequenceId f : s.forks) cache_.release(f);
    s.forks.clear();
  }
};

}  // namespace seed::spec
