// What every engine does per request, around its own schedule: validate and
// tokenize the batch, bound each draft by the tokens and context left, feed
// verdicts into the request's output, and account statistics. Engines
// differ only in when they draft and how they batch verification.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/tokenizer.h"
#include "spec/api/drafter.h"
#include "spec/api/engine.h"
#include "spec/engine/request_acceptance.h"
#include "spec/engine/request_output.h"
#include "spec/api/target.h"

namespace seed::models {
class ChatTemplate;
}

namespace seed::spec {

using Clock = std::chrono::steady_clock;

inline double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// One request in flight.
struct Sequence {
  uint64_t slot = 0;     // in the target and drafters; unique among the calls in an engine
  size_t index = 0;      // its request's index in the generate() call
  uint64_t caller = 0;   // the call it belongs to (the scheduler serves calls round-robin)
  int drafter = -1;      // the DrafterPool worker that drafts for it; -1: none
  bool started = false;  // started on the target
  bool target_seen = false;  // the target has computed its prompt (prefill or first verify)
  bool drafting = false;     // a proposal for it is being drafted or waits in the queue
  int64_t kv_tokens = 0;     // the target's KV tokens reserved for it while it runs
  const GenRequest* request = nullptr;
  std::vector<int32_t> prompt;
  std::optional<RequestOutput> output;
  std::optional<Completion> completion;  // once settled
  RequestStats stats;
  RequestAcceptance acceptance;  // its chains' verdicts, where its draft length varies
  // Its drafter has started it, and the verdicts of rounds that drafted
  // nothing since, not yet handed to it (DrafterPool::post); the engine's
  // thread only.
  bool drafter_started = false;
  std::vector<Verdict> undrafted;
};

// What the engines share: the tokenizer (null for token-only use), the
// tokens that end a request, and the draft shape. An engine keeps its
// RunSettings, so it shares ownership of the tokenizer.
struct RunSettings {
  std::shared_ptr<const models::Tokenizer> tokenizer;
  // The model's EOS and its generation_config.json's eos_token_id list
  // (Llama 3 instruct ends turns with <|eot_id|>); empty: none.
  std::vector<int32_t> stop_tokens;
  std::vector<int> k_config;  // empty: no drafting
  std::optional<PrunedTree> pruned_tree;  // set: k_config bounds a pruned candidate tree
  // A chain k_config is the longest draft: each request's next draft is as
  // long as the measured acceptance and costs make best, 0 included
  // (DraftLengthPolicy). Off: every round drafts the whole chain.
  bool adaptive_draft_length = false;
  // Sampled requests draw their drafts from q (DraftSettings::sample_drafts);
  // their tokens then depend on the draft, so their drafts keep k_config's
  // length.
  bool sample_drafts = false;
  // Set: each text prompt is a user turn, after a system turn of
  // `chat_system` (if not empty), rendered by the target's chat template
  // before it is tokenized (encode_prompt).
  std::shared_ptr<const models::ChatTemplate> chat_template;
  std::string chat_system;
  nlohmann::ordered_json chat_variables = nlohmann::ordered_json::object();  // the template's, beside the turns
};

// The RunSettings of a target model folder: its tokenizer (tokenizer.model
// or tokenizer.json; none: token-only) and its stop tokens; with
// `chat_system`, its chat template (kInvalidArgument naming the folder's
// tokenizer_config.json if it has none), rendered with `chat_variables`.
RunSettings model_run_settings(const std::string& model_dir,
                               const std::optional<std::string>& chat_system = std::nullopt,
                               const nlohmann::ordered_json& chat_variables = nlohmann::ordered_json::object());

// A text prompt's tokens: BOS (if the tokenizer has one) + the text, or the
// chat template's rendering of it, encoded without added special tokens.
// REQUIRES settings.tokenizer.
std::vector<int32_t> encode_prompt(const RunSettings& settings, const std::string& prompt);

// Validates and tokenizes `requests` (slot = index). Throws kInvalidArgument naming the
// request index and field: empty prompt, text without a tokenizer, a token
// outside the vocabulary, max_new_tokens < 0, an empty stop string, stop
// strings without a tokenizer, invalid sampling. A prompt longer than the
// target's context is not a throw: that request alone ends with kError.
std::vector<Sequence> prepare_sequences(const std::vector<GenRequest>& requests, const RunSettings& settings,
                                        const Target& target);

TargetSettings target_settings(const GenRequest& request);
// The draft shape of `request`: a chain of its draft_length where it sets
// one and the engine drafts chains (`k_config` all ones, not a pruned tree),
// else `k_config`.
std::vector<int> draft_shape(const GenRequest& request, const std::vector<int>& k_config, bool pruned_tree);
DraftSettings draft_settings(const GenRequest& request, const std::vector<int>& k_config,
                             const std::optional<PrunedTree>& pruned_tree, bool sample_drafts);

// How deep the next draft of `seq` may be: bounded by the draft shape, the
// target's context and the tokens left (a round adds accepted + 1 tokens).
// -1 when the context is full: the caller ends the request with kContext.
int draft_depth(const Sequence& seq, const Target& target, int shape_depth);

// Feeds a verdict's tokens into the output until it finishes; updates the
// counts. Returns true if the request is finished.
bool apply_verdict(Sequence& seq, const DraftTree& draft, const Verdict& verdict);

// Records the completion of `seq` (REQUIRES its output finished) at
// `elapsed` seconds into generate().
void settle(Sequence& seq, double elapsed);

// Tells `on_complete` (if any) that `seq` (settled) completed and ends the
// requests it cancels in reply (by index in the call): those of `seqs` still
// running, returned so that the engine frees what they hold and settles them.
std::vector<Sequence*> cancelled_by(const CompletionCallback& on_complete, const Sequence& seq,
                                    std::vector<Sequence>& seqs);

// Completions in request order, their requests' counts added to `stats`
// (the engine adds what its target forwards did).
std::vector<Completion> take_completions(std::vector<Sequence>& seqs, EngineStats& stats);

}  // namespace seed::spec
