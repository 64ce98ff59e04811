// What engines report of their work (spec/api/engine.h): per request
// (RequestStats, with each Completion), the target's prompt work and KV
// cache (PrefillStats), step-level speculation (StepStats), and an engine's
// totals over its generate() calls (EngineStats).
//
// Plain values, torch-free; not synchronised (an engine guards its own).
#pragma once

#include <cstdint>

#include "spec/api/acceptance.h"

namespace seed::spec {

struct RequestStats {
  int64_t prompt_tokens = 0;
  int64_t generated_tokens = 0;  // tokens in Completion::tokens
  // Tokens its target forwards gave it: generated_tokens and the
  // end-of-sequence token that ended it, if one did (not in
  // Completion::tokens, but a forward produced it). tau counts these, so that
  // the target decoding alone has tau 1.
  int64_t round_tokens = 0;
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
  double tau() const { return target_forwards ? double(round_tokens) / double(target_forwards) : 0.0; }
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
    return rounds ? double(thought.round_tokens + evaluation.round_tokens) / double(rounds) : 0.0;
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

}  // namespace seed::spec
