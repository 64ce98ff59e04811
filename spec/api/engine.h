// Engine: how the search layer gets text generated (docs/architecture.md, "One request, end to end").
//
// The search hands a batch of GenRequests to Engine::generate and gets one
// Completion per request back, in order. How the batch is run (serially,
// batched, speculatively, on threads or ranks) is the engine's business; what
// comes back is not: each request owns a counter-based random stream keyed by
// (seed, stream), so its completion does not depend on the engine's
// schedule, the other requests in the batch, or the number of workers.
// Every request completes identically under every engine, greedy or
// sampled (the verifier's matching rule); with drafts drawn from q
// (DraftSettings::sample_drafts), a sampled one identically under an engine
// and its scheduled variant (seed == sd), with the target's exact
// distribution under all of them.
//
// Torch-free on purpose: the search layer includes this and nothing below it.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "models/base/sampling.h"
#include "spec/api/acceptance.h"

namespace seed::spec {

// What a request is for; engines report their statistics per kind (SEED's
// RQ2 splits thought generation from state evaluation).
enum class RequestKind { kThought, kEvaluation };

struct GenRequest {
  std::string prompt;                  // text; the engine tokenizes it (with BOS)
  std::vector<int32_t> prompt_tokens;  // or tokens, used as given when non-empty
  int64_t max_new_tokens = 128;
  // Generation stops after the first occurrence of any of these in the
  // generated text; the completion's text ends just before it.
  std::vector<std::string> stop;
  SamplingParams sampling;
  uint64_t seed = 0;    // with `stream`, keys every random draw of this request
  uint64_t stream = 0;  // distinguishes requests that share a seed
  RequestKind kind = RequestKind::kThought;
  double priority = 0;  // larger is more urgent (schedulers that rank work)
  // Requests with the same group (say, every request of one problem) share
  // what model-free drafters learn from the target (STAND's n-gram tables).
  // Opaque to the engine; never changes what a greedy request generates.
  uint64_t group = 0;
  // > 0: draft chains of this many tokens instead of the engine's draft
  // length (engines that draft chains; trees keep their shape). Lookahead
  // sets it per call from measured acceptance and costs. At most
  // kMaxDraftLength.
  int draft_length = 0;
};
constexpr int kMaxDraftLength = 256;

enum class FinishReason {
  kLength,   // max_new_tokens generated
  kEos,      // the model's end-of-sequence token (not part of text or tokens)
  kStop,     // a stop string
  kContext,  // the model's context is full
  kError,    // this request failed; Completion::error says why
  kCancelled,  // the caller no longer needed it (generate's on_complete)
};
const char* finish_reason_name(FinishReason reason);  // "length", "eos", ...

struct RequestStats {
  int64_t prompt_tokens = 0;
  int64_t generated_tokens = 0;  // tokens in Completion::tokens
  int64_t target_forwards = 0;   // target forwards this request took part in
  int64_t drafted_tokens = 0;    // draft tokens sent to verification
  int64_t accepted_tokens = 0;   // of those, accepted
  int64_t rejections = 0;        // rounds that ended by rejecting a drafted token
  double draft_s = 0;            // time spent drafting for this request
  double verify_s = 0;           // target time, shared forwards split evenly
  double wall_s = 0;             // from the start of generate() to completion
  // Its share of the target's work: each forward it took part in split
  // evenly among the sequences verified, and the prompt tokens the target
  // computed when it started (a forward's computed prompt tokens split among
  // the sequences it started, by prompt length). Summed over every request,
  // the engine's target_forwards and prefill.computed_tokens.
  double target_share = 0;
  double prefill_share = 0;

  // The acceptance rate, per tested draft token (spec/api/acceptance.h).
  double alpha() const { return acceptance_rate(accepted_tokens, accepted_tokens + rejections); }
  // Mean tokens a sequence gains per target forward it takes part in.
  double tau() const { return target_forwards ? double(generated_tokens) / double(target_forwards) : 0.0; }
};

struct Completion {
  std::string text;             // decoded generated text, stop string cut off
  std::vector<int32_t> tokens;  // generated tokens (through the one that completed a stop)
  FinishReason finish = FinishReason::kLength;
  std::string error;            // why, when finish == kError
  RequestStats stats;
};

// Prompt work on the target (what its prefix cache saved) and its KV cache.
struct PrefillStats {
  int64_t prompt_tokens = 0;    // prompt tokens of the slots started
  int64_t computed_tokens = 0;  // of those, run through the model (the rest were cached)
  int64_t kv_peak_bytes = 0;    // most bytes the KV cache held, live and cached
  int64_t kv_live_bytes = 0;    // bytes live slots hold now
  int64_t evicted_blocks = 0;   // cached blocks given up to stay within the KV budget
  // Target verify calls (one forward each) and where their time went: the
  // model's forward (to logits on the host), then the verifier on the host.
  int64_t verify_rounds = 0;
  double forward_s = 0;
  double host_verify_s = 0;
  // The model's forwards that warmed up a CUDA graph rather than replay
  // one (models::ForwardGraphs::warm_ups): an operation across one is no
  // measure of the others, so the engine's policies do not time it.
  int64_t graph_warm_ups = 0;

  // The counts and times added since `earlier`, a snapshot of the same
  // target; the KV cache's bytes as they are in this one.
  PrefillStats since(const PrefillStats& earlier) const;
  // Adds `added`'s counts and times; the KV cache's bytes become its (they
  // are levels, not counts).
  PrefillStats& operator+=(const PrefillStats& added);
};

// Step-level speculation (spec/lookahead/lookahead_engine.h): drafted
// reasoning steps, judged against the target's. All 0 for engines that
// speculate on tokens only.
struct StepStats {
  int64_t rounds = 0;            // rounds (one target call each)
  int64_t request_rounds = 0;    // requests in flight, summed over rounds
  int64_t drafted_steps = 0;     // drafted steps compared with the target's
  int64_t accepted_steps = 0;    // of those, committed
  int64_t committed_steps = 0;   // drafted and target steps committed
  int64_t gamma_sum = 0;         // the rounds' gammas, summed
  int64_t token_rounds = 0;      // rounds whose token draft length was chosen (adaptive)
  int64_t draft_length_sum = 0;  // those rounds' token draft lengths, summed

  double mean_gamma() const { return rounds ? double(gamma_sum) / double(rounds) : 0; }
  double mean_draft_length() const { return token_rounds ? double(draft_length_sum) / double(token_rounds) : 0; }
  // Steps a request commits per round it takes part in.
  double steps_per_round() const { return request_rounds ? double(committed_steps) / double(request_rounds) : 0; }
  // The acceptance rate of drafted steps (each is tested).
  double acceptance() const { return acceptance_rate(accepted_steps, drafted_steps); }
  StepStats& operator+=(const StepStats& other);
};

// Totals over every generate() call since construction (or reset_stats()).
struct EngineStats {
  int64_t requests = 0;
  int64_t generated_tokens = 0;
  int64_t target_forwards = 0;  // target model forwards, batched ones counted once
  int64_t forward_sequences = 0;       // sequences verified, summed over target forwards
  int64_t peak_forward_sequences = 0;  // the most sequences one target forward verified
  int64_t drafted_tokens = 0;
  int64_t accepted_tokens = 0;
  int64_t rejections = 0;
  // Time with at least one generate() call in the engine (calls that
  // overlap count once; serial calls add up).
  double wall_s = 0;
  double target_busy_s = 0;     // time the target spent in forwards
  double draft_s = 0;           // drafting time, summed over drafters
  int64_t drafter_faults = 0;   // sequences moved off a drafter that became unavailable
  PrefillStats prefill;         // kv_peak_bytes: the most at any point
  RequestStats thought;         // per kind, summed over requests (wall_s: summed latency)
  RequestStats evaluation;
  StepStats steps;

  // As RequestStats: per tested token, and per sequence round (so batching
  // several sequences into one forward does not inflate tau).
  double alpha() const { return acceptance_rate(accepted_tokens, accepted_tokens + rejections); }
  double tau() const {
    const int64_t rounds = thought.target_forwards + evaluation.target_forwards;
    return rounds ? double(thought.generated_tokens + evaluation.generated_tokens) / double(rounds) : 0.0;
  }
  double tokens_per_s() const { return wall_s > 0 ? double(generated_tokens) / wall_s : 0.0; }
  double mean_forward_sequences() const {
    return target_forwards ? double(forward_sequences) / double(target_forwards) : 0.0;
  }
  // Draft tokens per sequence round: the draft length the engine chose, on average.
  double mean_draft_length() const {
    const int64_t rounds = thought.target_forwards + evaluation.target_forwards;
    return rounds ? double(drafted_tokens) / double(rounds) : 0.0;
  }
  double target_busy() const { return wall_s > 0 ? target_busy_s / wall_s : 0.0; }
};

// Adds one completed request's counts (requests, tokens, drafts, draft
// time, and its kind's RequestStats) to `stats`.
void add_completion(EngineStats& stats, RequestKind kind, const RequestStats& request);

// Told of each completion as it happens (the request's index and its
// completion); returns the indices of requests still running that are no
// longer needed.
using CompletionCallback = std::function<std::vector<size_t>(size_t index, const Completion& completion)>;

// How an engine drafts, as built: for reports.
struct DraftPlan {
  std::vector<int> k_config;  // children per depth of a request's draft; empty: it does not draft
  // Pruned candidate trees (PrunedTree, spec/api/drafter.h), bounded by
  // k_config: a node expands at path confidence >= pct_expand and stays at
  // >= pct_prune, measured at construction where the options left them to
  // measure. Both 0 for fixed shapes.
  float pct_expand = 0;
  float pct_prune = 0;
};

// What an engine's scheduler did: a proposal queued (by drafter `worker`,
// -1: none) or verified (in forward number `worker`, from 0), for the
// request the engine numbers `slot`.
struct ScheduleEvent {
  enum Kind { kProposed, kVerified } kind;
  uint64_t slot;
  int worker;
};

class Engine {
 public:
  virtual ~Engine() = default;
  // One completion per request, in request order. A request that fails
  // (say, a drafter error) completes with FinishReason::kError and does not
  // disturb the others. Throws seed::Error for a malformed request (naming
  // the request index and field) and for failures of the target model,
  // which no request can survive.
  std::vector<Completion> generate(const std::vector<GenRequest>& requests) { return generate(requests, {}); }
  // As above, calling `on_complete` as each request completes, in the order
  // they complete: on the thread that runs the engine's loop, which may be
  // another caller's (calls of one generate() never overlap, and each
  // happens before this generate() returns). The requests it names stop where
  // they are and complete with FinishReason::kCancelled (their text and
  // tokens as far as they got); what they held in the target and drafters
  // is freed. A request cancelled before it started generates nothing.
  //
  // Several threads may be inside generate() at once (each a search solving
  // its own problem) where the engine says so (serves_concurrent_calls());
  // their requests then share the engine's target forwards, and each call
  // returns as soon as its own requests are done. A target failure fails
  // every call in flight.
  virtual std::vector<Completion> generate(const std::vector<GenRequest>& requests,
                                           const CompletionCallback& on_complete) = 0;
  // Whether generate() may be called from several threads at once.
  virtual bool serves_concurrent_calls() const { return false; }
  virtual std::string name() const = 0;
  virtual EngineStats stats() const = 0;  // thread-safe where generate() is
  virtual void reset_stats() = 0;
  virtual DraftPlan draft_plan() const { return {}; }
  // Its scheduler's events since it was made or reset_stats(), in the order
  // they happened (`seed run --schedule-out`); none for an engine without one.
  virtual std::vector<ScheduleEvent> schedule() const { return {}; }
};

}  // namespace seed::spec
