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
#include "spec/api/engine_stats.h"

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

struct Completion {
  std::string text;             // decoded generated text, stop string cut off
  std::vector<int32_t> tokens;  // generated tokens (through the one that completed a stop)
  FinishReason finish = FinishReason::kLength;
  std::string error;            // why, when finish == kError
  RequestStats stats;
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
  // No request of `group` follows (a search calls it when its problem is
  // solved): drafters drop what they learned for the group, so that a run
  // over many problems keeps the tables of the problems in flight only. A
  // request of the group that still comes starts afresh. Thread-safe; call
  // it after the group's last generate() returned. Never throws.
  virtual void end_group(uint64_t /*group*/) noexcept {}
  // Whether generate() may be called from several threads at once.
  virtual bool serves_concurrent_calls() const { return false; }
  virtual std::string name() const = 0;
  virtual EngineStats stats() const = 0;  // thread-safe where generate() is
  virtual void reset_stats() = 0;
  virtual DraftPlan draft_plan() const { return {}; }
  // From now on, keep the scheduler's events for schedule() (`seed run
  // --schedule-out`). Unasked, none are kept: a long run would hold two for
  // every proposal it ever verified.
  virtual void record_schedule() {}
  // The events kept since record_schedule() or the last reset_stats(), in
  // the order they happened; none for an engine without a scheduler.
  virtual std::vector<ScheduleEvent> schedule() const { return {}; }
};

}  // namespace seed::spec
