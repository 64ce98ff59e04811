// ModelTarget: the Target handle for a causal LM in this process.
//
// A slot's pending tokens (the prompt at first, then each round's bonus
// token) and its draft tree go through the model in one forward with a tree
// mask: the pending tokens form a chain and the draft's roots hang from the
// last of them. So prefill rides along with a slot's first verification,
// and a batch may mix prefills, drafts and plain decoding steps.
//
// Prompts share work through the KV cache's prefix table: a slot's first
// verification starts its sequence from the longest prefix cached, and
// when several slots of one batch share an uncached prefix (the samples of
// one search state, siblings under one parent) one of them computes it in a
// first forward that the others then reuse. The LM head runs only on the
// rows the verifier reads: the last pending token's and the draft's. On
// host rows of a real vocabulary, the batch's requests are verified side
// by side on the calling thread's OpenMP team (a sampled request races
// every context it reaches over the whole vocabulary).
//
// A cache made with a hidden_layer keeps every position's hidden state
// there, and each verdict carries those the slot's drafter has not seen
// (Verdict::hidden), prompt positions the prefix cache supplied included.
#pragma once

#include <cstdint>
#include <map>
#include <memory>

#include "models/causal_lm.h"
#include "spec/api/target.h"
#include "spec/engine/logit_reads.h"

namespace seed::spec {

class ModelTarget : public Target {
 public:
  // distribution_top_k > 0: each verdict carries the top entries of p at
  // its tokens' contexts (Verdict::target_top), for drafters that learn
  // from the target (DrafterKind::target_top_k).
  explicit ModelTarget(std::shared_ptr<models::CausalLM> model, models::KvCacheOptions cache_options = {},
                       int distribution_top_k = 0, LogitReads logit_reads = LogitReads::kAuto);
  ~ModelTarget() override;

  int64_t vocab_size() const override;
  int64_t max_positions() const override;
  void start(uint64_t slot, const std::vector<int32_t>& prompt, const TargetSettings& settings) override;
  int64_t room(uint64_t slot) const override;
  std::vector<Verdict> verify(const std::vector<VerifyItem>& items) override;
  void prefill(const std::vector<uint64_t>& slots) override;
  void finish(uint64_t slot) override;
  PrefillStats prefill_stats() const override;
  int64_t kv_token_capacity() const override;
  // From the next verify on (a target serving engines whose drafters differ).
  void set_distribution_top_k(int k) { distribution_top_k_ = k; }

 private:
  struct Slot {
    models::SequenceId sequence = 0;
    bool started = false;    // the cache sequence exists (from the first verify on)
    bool prefilled = false;  // the prompt is in the cache (after the first verify)
    TargetSettings settings;
    std::vector<int32_t> prompt;   // until started
    std::vector<int32_t> pending;  // accepted, not yet in the cache
    int64_t length = 0;            // tokens in the cache
    int64_t hidden_sent = 0;       // positions whose hidden states verdicts carried
  };
  const Slot& slot_state(uint64_t slot) const;
  // Adds to `batch` the input that computes all of `s`'s pending tokens
  // but the last (which its next verify feeds), and counts them as cached.
  void take_prompt_head(Slot& s, std::vector<models::SequenceInput>& batch);
  // Starts the cache sequences of the items' new slots, computing the
  // prefixes they share once.
  void start_sequences(const std::vector<VerifyItem>& items);
  void start_sequence(Slot& s);
  // The cache's hidden states of `sequence` at positions [from, to).
  std::vector<float> hidden_states(models::SequenceId sequence, int64_t from, int64_t to) const;

  std::shared_ptr<models::CausalLM> model_;
  // The model's warm-ups before this target (an earlier engine's, where the
  // model outlives engines: EngineOptions::loaded_models).
  int64_t graph_warm_ups_before_;
  models::KvCache cache_;
  std::map<uint64_t, Slot> slots_;
  PrefillStats stats_;
  int distribution_top_k_;
  LogitReads logit_reads_;
};

}  // namespace seed::spec
