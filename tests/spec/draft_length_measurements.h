// Scripted measurements for DraftLengthPolicy's tests: forwards timed by
// a cost in their rows, drafts by a cost per token, and verdicts at a
// given acceptance.
#pragma once

#include <cstdint>
#include <functional>

#include "spec/engine/draft_length_policy.h"

namespace seed::spec {

constexpr double kMs = 1e-3;

// Forwards of every width 1..max_width, drafting 0..longest tokens each
// (`wider`: on the drafters' cores too), timed by `seconds(rows)`.
inline void time_forwards(DraftLengthPolicy& policy, int longest, int max_width,
                          const std::function<double(int)>& seconds, bool wider = false) {
  for (int width = 1; width <= max_width; ++width) {
    for (int k = 0; k <= longest; ++k) {
      const int rows = width * (k + 1);
      policy.add_forward(width, rows - width, seconds(rows), wider);
    }
  }
}

// One-token verdicts, a fraction `accept` of them accepted, spread evenly.
inline void give_verdicts(DraftLengthPolicy& policy, double accept) {
  for (int i = 0; i < 200; ++i) {
    const bool accepted = static_cast<int>((i + 1) * accept) > static_cast<int>(i * accept);
    policy.add_verdict(accepted ? 1 : 0, !accepted);
  }
}

// time_forwards(), with drafts of 1..longest tokens for each width, of
// `draft_ms` a token after `latency_ms` each (their shares of batches of
// `draft_batch`); then give_verdicts().
inline void measure(DraftLengthPolicy& policy, int longest, int max_width, const std::function<double(int)>& seconds,
                    double draft_ms, double accept, bool wider = false, double latency_ms = 0,
                    int64_t draft_batch = 1) {
  time_forwards(policy, longest, max_width, seconds, wider);
  for (int width = 1; width <= max_width; ++width) {
    for (int k = 1; k <= longest; ++k) policy.add_draft(k, (latency_ms + k * draft_ms) * kMs, draft_batch);
  }
  give_verdicts(policy, accept);
}

inline double flat(int) { return 1 * kMs; }                           // a GPU with headroom: rows are free
inline double cpu_like(int rows) { return (0.5 + 0.1 * rows) * kMs; }  // each row costs a fifth of the base

}  // namespace seed::spec
