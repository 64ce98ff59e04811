#include "spec/api/engine_stats.h"

namespace seed::spec {

namespace {

// Calls f(x, y) on each of `into`'s counts and times with `from`'s: every
// field of PrefillStats but the KV cache's bytes, which are levels.
template <typename F>
void each_count(PrefillStats& into, const PrefillStats& from, F f) {
  f(into.prompt_tokens, from.prompt_tokens);
  f(into.computed_tokens, from.computed_tokens);
  f(into.evicted_blocks, from.evicted_blocks);
  f(into.verify_rounds, from.verify_rounds);
  f(into.forward_s, from.forward_s);
  f(into.host_verify_s, from.host_verify_s);
  f(into.graph_warm_ups, from.graph_warm_ups);
}

}  // namespace

PrefillStats PrefillStats::since(const PrefillStats& earlier) const {
  PrefillStats added = *this;
  each_count(added, earlier, [](auto& x, const auto& y) { x -= y; });
  return added;
}

PrefillStats& PrefillStats::operator+=(const PrefillStats& added) {
  each_count(*this, added, [](auto& x, const auto& y) { x += y; });
  kv_peak_bytes = added.kv_peak_bytes;
  kv_live_bytes = added.kv_live_bytes;
  return *this;
}

StepStats& StepStats::operator+=(const StepStats& other) {
  rounds += other.rounds;
  request_rounds += other.request_rounds;
  drafted_steps += other.drafted_steps;
  accepted_steps += other.accepted_steps;
  committed_steps += other.committed_steps;
  gamma_sum += other.gamma_sum;
  token_rounds += other.token_rounds;
  draft_length_sum += other.draft_length_sum;
  return *this;
}

}  // namespace seed::spec
