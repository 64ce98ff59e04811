// Engine: how the search layer gets text generated (DESIGN.md, contracts).
//
// The search hands a batch of GenRequests to Engine::generate and gets one
// Completion per request back, in order. How the batch is run (serially,
// batched, speculatively, on threads or ranks) is the engine's business; what
// comes back is not: each request owns a counter-based random stream keyed by
// (seed, stream), so its completion does not depend on the engine's
// schedule, the other requests in the batch, or the number of workers.
// Greedy requests complete identically under every engine; sampled ones
// identically under an engine and its scheduled variant (seed == sd), and
// with the target's exact distribution under all of them.
//
// Torch-free on purpose: the search layer includes this and nothing below it.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "models/base/sampling.h"

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

  // Per-token acceptance rate: accepted over tested draft tokens (a round
  // tests its accepted tokens and at most one rejected), the alpha of
  // tau_max = (1 - alpha^(k+1)) / (1 - alpha).
  double alpha() const {
    const int64_t tested = accepted_tokens + rejections;
    return tested ? double(accepted_tokens) / double(tested) : 0.0;
  }
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
};

// Totals over every generate() call since construction (or reset_stats()).
struct EngineStats {
  int64_t requests = 0;
  int64_t generated_tokens = 0;
  int64_t target_forwards = 0;  // target model forwards, batched ones counted once
  int64_t drafted_tokens = 0;
  int64_t accepted_tokens = 0;
  int64_t rejections = 0;
  double wall_s = 0;            // summed over generate() calls
  double target_busy_s = 0;     // time the target spent in forwards
  double draft_s = 0;           // drafting time, summed over drafters
  int64_t drafter_faults = 0;   // sequences moved off a drafter that became unavailable
  PrefillStats prefill;         // kv_peak_bytes: the most at any point
  RequestStats thought;         // per kind, summed over requests (wall_s: summed latency)
  RequestStats evaluation;

  // As RequestStats: per tested token, and per sequence round (so batching
  // several sequences into one forward does not inflate tau).
  double alpha() const {
    const int64_t tested = accepted_tokens + rejections;
    return tested ? double(accepted_tokens) / double(tested) : 0.0;
  }
  double tau() const {
    const int64_t rounds = thought.target_forwards + evaluation.target_forwards;
    return rounds ? double(thought.generated_tokens + evaluation.generated_tokens) / double(rounds) : 0.0;
  }
  double tokens_per_s() const { return wall_s > 0 ? double(generated_tokens) / wall_s : 0.0; }
  double target_busy() const { return wall_s > 0 ? target_busy_s / wall_s : 0.0; }
};

// Told of each completion as it happens (the request's index and its
// completion); returns the indices of requests still running that are no
// longer needed.
using CompletionCallback = std::function<std::vector<size_t>(size_t index, const Completion& completion)>;

class Engine {
 public:
  virtual ~Engine() = default;
  // One completion per request, in request order. A request that fails
  // (say, a drafter error) completes with FinishReason::kError and does not
  // disturb the others. Throws seed::Error for a malformed request (naming
  // the request index and field) and for failures of the target model,
  // which no request can survive.
  std::vector<Completion> generate(const std::vector<GenRequest>& requests) { return generate(requests, {}); }
  // As above, calling `on_complete` (on the calling thread) as each request
  // completes, in the order they complete. The requests it names stop where
  // they are and complete with FinishReason::kCancelled (their text and
  // tokens as far as they got); what they held in the target and drafters
  // is freed. A request cancelled before it started generates nothing.
  virtual std::vector<Completion> generate(const std::vector<GenRequest>& requests,
                                           const CompletionCallback& on_complete) = 0;
  virtual std::string name() const = 0;
  virtual EngineStats stats() const = 0;
  virtual void reset_stats() = 0;
};

}  // namespace seed::spec
